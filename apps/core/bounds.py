"""Bounds on what people type, shared by every area (docs/rules/README.md#input-bounds).

Short text columns carry their own ``max_length``, which forms and the API take from
the model. Free text has none in the database; its limit lives here, is set as the
field's ``max_length`` (forms and serializers read it from there as well) and is stated
on plain forms and serializers that take the same text.
"""

# Free text: notes, requirements, excerpts, conclusions, guidance.
TEXT_MAX_LENGTH = 10_000
# Reasons, justifications and comments a record keeps beside a decision.
REASON_MAX_LENGTH = 2_000
# The reason an edit states, kept in the audit history.
CHANGE_REASON_MAX_LENGTH = 500

# Durations people type: up to ten years in days, a year in hours, ten years in months.
DAYS_MAX = 3_650
HOURS_MAX = 8_760
MONTHS_MAX = 120
# Accelerator cards in one offer, one node or one requirement.
CARDS_MAX = 100_000
CARDS_PER_NODE_MAX = 1_024

# ISO 4217 codes of the currencies in circulation (funds and precious metals left out).
# A record saved before the list was enforced keeps its code and reads as stored.
CURRENCY_CODES = (
    "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN",
    "BAM", "BBD", "BDT", "BGN", "BHD", "BIF", "BMD", "BND", "BOB", "BRL",
    "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF", "CHF", "CLP", "CNY",
    "COP", "CRC", "CUP", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP",
    "ERN", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GHS", "GIP", "GMD",
    "GNF", "GTQ", "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR",
    "IQD", "IRR", "ISK", "JMD", "JOD", "JPY", "KES", "KGS", "KHR", "KMF",
    "KPW", "KRW", "KWD", "KYD", "KZT", "LAK", "LBP", "LKR", "LRD", "LSL",
    "LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR",
    "MVR", "MWK", "MXN", "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR",
    "NZD", "OMR", "PAB", "PEN", "PGK", "PHP", "PKR", "PLN", "PYG", "QAR",
    "RON", "RSD", "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD",
    "SHP", "SLE", "SOS", "SRD", "SSP", "STN", "SVC", "SYP", "SZL", "THB",
    "TJS", "TMT", "TND", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "UGX",
    "USD", "UYU", "UZS", "VED", "VES", "VND", "VUV", "WST", "XAF", "XCD",
    "XCG", "XOF", "XPF", "YER", "ZAR", "ZMW", "ZWG",
)  # fmt: skip
CURRENCY_CHOICES = [(code, code) for code in CURRENCY_CODES]
