"""What the scripts of tools/ share, each helper once.

A script puts its own folder on sys.path and imports the modules it needs:

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from simtools import rows, summary

tests/ and bench/ put the tools/ folder of the source root there instead.

  rows         the published-run tables of tests/validation/data: reading
               them, a row's measured step time
  models       the model XML of a published run, from its row's columns
  commands     the parts a row's sim command line is built of (layout,
               recomputation, FP8, the split of uneven pipelines)
  clusters     the cluster files of a row: the Hopper files that share one
               fit, the Blackwell files and their racks
  runs         running sim and reading its JSON
  summary      the one-line summary of a table's step-time errors
  bands        the error bands of the band file, topologies/bands.xml
  options      the command-line options the scripts share (--extra,
               --tolerance, --write | --check-band)
  calibration  the calibration rows as tools/fit-efficiency.py fits them
               (training_calibration.csv, also mosaic_h100_heldout.csv,
               megascale_scaling.csv): their command, the rows kept out,
               the runner
  heldout      the held-out dense H100 rows (h100_dense_heldout.csv)
  moe          the mixture-of-experts rows (moe_training.csv)
  layouts      every published run as a plan (bench/validation-layouts.py,
               tests/test-steady-rows.py)
"""
import os

# the source tree this package is in (its tools/ folder's parent): the
# SOURCE_ROOT of a script that is not given one
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
