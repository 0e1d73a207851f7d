"""Build dist/diligence-harness.pyz: the whole harness in one file for a bare Python.

    python harness/build_zipapp.py [--output PATH]

Only the package's modules and its JSON schema go in; `__main__` calls the CLI.
"""

import argparse
import os
import shutil
import tempfile
import zipapp

HERE = os.path.dirname(os.path.abspath(__file__))


def build(output: str) -> str:
    with tempfile.TemporaryDirectory() as staging:
        shutil.copytree(
            os.path.join(HERE, "diligence_harness"),
            os.path.join(staging, "diligence_harness"),
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
        os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
        zipapp.create_archive(
            staging,
            target=output,
            interpreter="/usr/bin/env python3",
            main="diligence_harness.cli:_zipapp_main",
            compressed=True,
        )
    return output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--output", default=os.path.join(HERE, "dist", "diligence-harness.pyz"))
    print(build(parser.parse_args().output))


if __name__ == "__main__":
    main()
