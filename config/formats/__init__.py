"""Per-language number formats that override Django's own (see FORMAT_MODULE_PATH)."""
