"""A finding: one disagreement or suspicious value, recorded in the bundle's `findings`.

Severity: `fail` (contradicts the claim or another source), `warn` (needs a look),
`info` (context the reviewer should see). The server decides what a finding means
for the verdict; the harness only records it with its evidence.
"""


def finding(
    check_id: str, severity: str, subject: str | None, message: str, *, step: str, **evidence
) -> dict:
    return {
        "id": check_id,
        "severity": severity,
        "step": step,
        "subject": subject,
        "message": message,
        "evidence": evidence,
    }
