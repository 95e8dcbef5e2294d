# -*- coding: utf-8 -*-
# SPDX-License-Identifier: Apache-2.0
# The options every gpulaunch.fleet module shares (module_utils/gpulaunch_cli's argument spec),
# documented once.

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  gpulaunch_bin:
    description: The gpulaunch program on the node.
    type: path
    default: /usr/bin/gpulaunch
"""
