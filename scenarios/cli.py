"""The `atomspark` command line."""

import argparse


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="atomspark")
    parser.parse_args(argv)
    return 0
