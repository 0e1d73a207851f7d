"""poppler's command-line tools, read the way an auditor would read them."""

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass
class PdfsigVerdict:
    signatures: int
    signature_valid: bool
    total_document_signed: bool
    output: str

    @property
    def valid(self) -> bool:
        # pdfsig exits 0 whatever it finds, and calls a file with an appended
        # update "valid" while saying only "Not total document signed".
        return self.signatures == 1 and self.signature_valid and self.total_document_signed


def pdfsig(path: Path) -> PdfsigVerdict:
    completed = subprocess.run(
        ["pdfsig", str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    output = completed.stdout + completed.stderr
    return parse_pdfsig(output)


def parse_pdfsig(output: str) -> PdfsigVerdict:
    signatures = len(re.findall(r"^Signature #\d+:", output, re.MULTILINE))
    validations = re.findall(r"Signature Validation: (.+)$", output, re.MULTILINE)
    return PdfsigVerdict(
        signatures=signatures,
        signature_valid=bool(validations)
        and all(v.strip() == "Signature is Valid." for v in validations),
        total_document_signed=bool(
            re.search(r"^\s*- Total document signed$", output, re.MULTILINE)
        ),
        output=output,
    )


def pdftotext(path: Path) -> str:
    return subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(path), "-"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout


def pdffonts(path: Path) -> str:
    return subprocess.run(
        ["pdffonts", str(path)], capture_output=True, text=True, timeout=60, check=True
    ).stdout
