#!/usr/bin/env python3
"""autosync_export.py - compatibility entry point: the exporter is
autosync.export (contrib/pytorch/autosync/export.py; installed as the
Python package 'autosync'). Run as before:

    python3 autosync_export.py 'torchvision.models.resnet18()' -o r18.yaml --name r18
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from autosync.export import *  # noqa: E402,F401,F403
from autosync.export import distinct_rows, export, main, measure_flops  # noqa: E402,F401

if __name__ == "__main__":
    main()
