"""What Django's error pages and reports may show of the settings."""

import re

from django.views.debug import SafeExceptionReporterFilter


class DiligenceExceptionReporterFilter(SafeExceptionReporterFilter):
    # Django's own list plus PIN: a PKCS#11 PIN (PACKET_SIGNING_PKCS11_PIN) is a secret too.
    hidden_settings = re.compile(
        "API|AUTH|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|PIN", flags=re.IGNORECASE
    )
