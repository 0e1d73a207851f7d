"""What the product's charts share (the comparison's bars, the load tests' lines): their
colours."""

# Ten distinguishable colours (Okabe–Ito, then a grey and a purple), cycled per series.
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
    "#999999",
    "#6A3D9A",
)
