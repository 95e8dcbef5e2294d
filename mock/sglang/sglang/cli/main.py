# SPDX-License-Identifier: Apache-2.0
"""Mock of SGLang's `sglang` console script (python/sglang/cli/main.py): `sglang serve FLAGS`
starts the same mock server as `python -m sglang.launch_server FLAGS`, as real SGLang's serve
runs the same run_server. Only `serve` is offered; anything else is an argparse usage error.
"""

import argparse
import sys

from sglang import launch_server


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="sglang")
    subparsers = parser.add_subparsers(dest="subcommand", required=True)
    # The server's own flags are left to launch_server's parser, as SGLang's serve does.
    subparsers.add_parser("serve", help="Launch the SGLang server.", add_help=False)
    args, server_argv = parser.parse_known_args(argv)
    if args.subcommand == "serve":
        # What exec() received for a console script: its path, then its arguments (the kernel's
        # interpreter from the #! line is not part of gpulaunch's argv).
        return launch_server.main(server_argv, recorded=[sys.argv[0], *argv])
    return 2


if __name__ == "__main__":
    sys.exit(main())
