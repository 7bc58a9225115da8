"""autosync - the Python side of autosync, the Slurm plugin that plans gradient sync.

  autosync.torch    wrap(model, ...) instead of DistributedDataParallel(model, ...):
                    applies the job's autosync plan (bucket sizes, compression,
                    PowerSGD, hierarchical all-reduce) through DDP's comm hooks
  autosync.plan     reads plan files and the AUTOSYNC_DDP_* variables (no torch)
  autosync.hooks    the DDP communication hooks
  autosync.export   writes a PyTorch model as an autosync model file

Importing this package imports no torch; its modules do when they need it.
"""
__version__ = "0.1.0"
