"""The reference training step: whether it ran soundly on every card, and its checkpoint's
round trip (docs/rules/evidence.md#reference-training-step).

The figures are the server's own (``apps.evidence.recompute_train``). These checks judge
what holds whatever the offer: every step's loss a finite number, the cards ending with
the same parameters, the restored checkpoint equal to the saved one. How many samples a
second, how well they scale and how fast a checkpoint goes are held to the acceptance
plan's thresholds (docs/rules/acceptance.md#training-thresholds), not here.
"""

from apps.evidence.rules import FAIL, NOT_MEASURED, PASS, Check, Context, Facts
from apps.evidence.wording import phrase

# Area findings of the register raised here: none (docs/rules/findings.md#findings-of-the-areas).
REGISTER_FINDINGS: tuple[str, ...] = ()

GROUP = "training"

# Stored in English and worded for the reader where shown (apps.evidence.wording).
THROUGHPUT_TITLE = phrase("Reference training step")
THROUGHPUT_SOURCE = phrase(
    "a seeded reference transformer trained on one card, then with DistributedDataParallel "
    "over every card; samples/s recomputed from each rank's batch size and step times"
)
THROUGHPUT_EXPECTED = phrase(
    "every step's loss a finite number; data parallelism leaves the same parameters on "
    "every card; the acceptance plan holds the figures to its thresholds"
)
ALL_CARDS_MEASURED = phrase(
    "%(per_card)s samples/s per card over %(cards)s cards, %(one)s on one card: scaling "
    "efficiency %(scaling)s (%(params)s M-parameter model)"
)
ONE_CARD_MEASURED = phrase("%(one)s samples/s on one card (%(params)s M-parameter model)")
NO_TRAINING = phrase("No training step in the bundle.")
ON_THE_CPU = phrase(
    "Measured on the CPU: it shows the training step works here, not what the cards deliver."
)
ONE_CARD_ONLY = phrase("One card: nothing to scale.")
NOT_FINITE = phrase("%(count)s steps ended with a loss that is not a number.")
PARAMETERS_DIFFER = phrase(
    "The cards ended with different parameters: the gradients were not averaged alike."
)
SOUND = phrase("Every rank ran every step with a finite loss.")

CHECKPOINT_TITLE = phrase("Checkpoint save and restore")
CHECKPOINT_SOURCE = phrase(
    "the one-card run's model and optimizer state written with torch.save and fsync'd, its "
    "cached pages dropped, then read into a fresh model; the SHA-256 of the state saved and "
    "restored"
)
CHECKPOINT_EXPECTED = phrase("the restored state equal to the saved one, bit for bit")
CHECKPOINT_MEASURED = phrase(
    "%(size)s GB saved in %(save)s s (%(save_rate)s GB/s), restored in %(restore)s s "
    "(%(restore_rate)s GB/s)"
)
NO_CHECKPOINT = phrase("No checkpoint in the bundle.")
RESTORE_DIFFERS = phrase(
    "The restored state differs from the state saved: the checkpoint does not bring the run back."
)
CACHED = phrase("The file's cached pages could not be dropped: the restore may have read memory.")


def checks(facts: Facts, context: Context) -> list[Check]:
    return [check_throughput(facts.training), check_checkpoint(facts.training)]


def _figure(value, digits: int) -> str:
    return f"{value:,.{digits}f}" if isinstance(value, int | float) else "—"


def _percent(value) -> str:
    return f"{value * 100:.1f}%" if isinstance(value, int | float) else "—"


def measured_words(training: dict) -> str | None:
    """Samples/s per card over all cards, on one card and the scaling, in a sentence."""
    one, every = training.get("one_card"), training.get("all_cards")
    params = (training.get("model") or {}).get("parameters")
    millions = _figure(params / 1e6 if isinstance(params, int) else None, 1)
    if one is None:
        return None
    if every is None:
        return ONE_CARD_MEASURED % {"one": _figure(one.get("samples_per_s"), 1), "params": millions}
    return ALL_CARDS_MEASURED % {
        "per_card": _figure(every.get("samples_per_s_per_card"), 1),
        "cards": every.get("cards"),
        "one": _figure(one.get("samples_per_s"), 1),
        "scaling": _percent(training.get("scaling_efficiency")),
        "params": millions,
    }


def check_throughput(training: dict | None) -> Check:
    check = Check(
        "training.throughput",
        GROUP,
        THROUGHPUT_TITLE,
        NOT_MEASURED,
        expected=THROUGHPUT_EXPECTED,
        source=THROUGHPUT_SOURCE,
    )
    if training is None or training.get("one_card") is None:
        check.detail = NO_TRAINING
        return check
    check.measured = measured_words(training)
    phases = [p for p in (training.get("one_card"), training.get("all_cards")) if p]
    failures = []
    bad_losses = sum(p.get("non_finite_losses") or 0 for p in phases)
    if bad_losses:
        failures.append(NOT_FINITE % {"count": bad_losses})
    every = training.get("all_cards")
    if every is not None and every.get("params_agree") is False:
        failures.append(PARAMETERS_DIFFER)
    notes = [ONE_CARD_ONLY] if every is None else []
    if failures:
        check.status = FAIL
    elif training.get("backend") == "cpu":
        notes.append(ON_THE_CPU)
    else:
        check.status = PASS
        notes.insert(0, SOUND)
    check.detail = " ".join(failures + notes)
    return check


def check_checkpoint(training: dict | None) -> Check:
    check = Check(
        "training.checkpoint",
        GROUP,
        CHECKPOINT_TITLE,
        NOT_MEASURED,
        expected=CHECKPOINT_EXPECTED,
        source=CHECKPOINT_SOURCE,
    )
    saved = (training or {}).get("checkpoint")
    if not saved:
        check.detail = NO_CHECKPOINT
        return check
    check.measured = CHECKPOINT_MEASURED % {
        "size": _figure(saved["bytes"] / 1e9, 2),
        "save": _figure(saved.get("save_s"), 2),
        "save_rate": _figure(saved.get("save_GBps"), 2),
        "restore": _figure(saved.get("restore_s"), 2),
        "restore_rate": _figure(saved.get("restore_GBps"), 2),
    }
    if not saved.get("restored_matches"):
        check.status, check.detail = FAIL, RESTORE_DIFFERS
        return check
    check.status = PASS
    check.detail = "" if saved.get("cache_dropped") else CACHED
    return check
