"""Command line: `python -m combpred demo` runs the main job, a tour of one problem per family of
structures on bundled data (`_tour.py`)."""

import argparse

from . import _tour


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m combpred")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser(
        "demo", help="one problem per family of structures against the model a user would otherwise pick"
    )
    demo.add_argument("--quick", action="store_true", help="one timing round (a smoke run)")
    args = parser.parse_args()
    if args.command == "demo":
        _tour.main(quick=args.quick)


if __name__ == "__main__":
    main()
