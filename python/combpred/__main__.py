"""Command line: `python -m combpred demo` runs the main job on the bundled yeast data."""

import argparse

from . import _demo


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m combpred")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="compare StructuredRidge with scikit-learn models on yeast")
    demo.add_argument("--quick", action="store_true", help="small subset and grids (a smoke run)")
    args = parser.parse_args()
    if args.command == "demo":
        _demo.main(quick=args.quick)


if __name__ == "__main__":
    main()
