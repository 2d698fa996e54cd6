"""Command line: `python -m combpred demo` runs the main job, a tour of one problem per family of
structures on bundled data (`_tour.py`)."""

import argparse
import os
import sys

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
        # A terminal or pipe whose encoding lacks ×, τ or ± (PYTHONIOENCODING=ascii) ended the tour
        # in a UnicodeEncodeError after eight lines (probe DN): such characters print as '?'.
        if hasattr(sys.stdout, "reconfigure"):
            sys.stdout.reconfigure(errors="replace")
        try:
            _tour.main(quick=args.quick)
        except KeyboardInterrupt:
            # Ctrl-C: one line and the shell's status for SIGINT, not a traceback through the core
            print("python -m combpred demo: interrupted", file=sys.stderr)
            sys.exit(130)
        except (ImportError, MemoryError) as exc:
            # The core refused to load (a malformed COMBPRED_MAX_MEMORY) or the memory budget is
            # below what the bundled data need: its message, in one line (probe 82: a traceback
            # of 25 lines after the tour's header)
            print(f"python -m combpred demo: {exc}", file=sys.stderr)
            sys.exit(1)
        except BrokenPipeError:
            # The reader left (`... demo | head`): stop quietly, as Unix tools do. Output still
            # buffered for the closed pipe would raise again at exit, so stdout goes to devnull.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        except OSError as exc:
            if exc.filename is not None:  # a file of the tour's own, not its output
                raise
            # Its output could not be written (`> /dev/full`, a full disk): say so in one line, not
            # a traceback, and drop what is still buffered for stdout.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            print(f"python -m combpred demo: could not write its output: {exc.strerror or exc}", file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
