"""Chinese pages group amounts by thousands with a comma, as Chinese finance documents do.

Django's own Chinese formats leave the thousand separator empty, which would print
1900000.00 in the Chinese packet where the English one prints 1,900,000.00.
"""

DECIMAL_SEPARATOR = "."
THOUSAND_SEPARATOR = ","
NUMBER_GROUPING = 3
