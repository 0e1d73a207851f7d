"""Issuing asks the whole-case layer for a document's chapters (docs/layers.md)."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from apps.casework.packet import chapters
from apps.packets import composition


def test_the_layer_registers_its_chapters_when_it_is_ready():
    composer = composition.packet_composer()
    assert composer.document_sections is chapters.document_sections
    assert composer.has_chapters is chapters.document_has_chapters


def test_a_document_asked_for_with_no_composer_fails_loudly(monkeypatch):
    monkeypatch.setattr(composition, "_composer", None)
    with pytest.raises(ImproperlyConfigured, match="apps.casework"):
        composition.packet_composer()
