from django.db import migrations


class Migration(migrations.Migration):
    """The typed RTT is an estimate: measured RTTs come from evidence bundles."""

    dependencies = [
        ("access", "0004_control_periods_and_risk_acceptance"),
    ]

    operations = [
        migrations.RenameField(
            model_name="networkplan", old_name="measured_rtt_ms", new_name="estimated_rtt_ms"
        ),
        migrations.RenameField(
            model_name="historicalnetworkplan",
            old_name="measured_rtt_ms",
            new_name="estimated_rtt_ms",
        ),
    ]
