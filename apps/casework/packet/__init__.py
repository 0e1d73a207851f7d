"""The composition of the signed packet and the four deliverables: which areas speak, in
what order, the layer's own chapters and the executive summary (docs/layers.md)."""
