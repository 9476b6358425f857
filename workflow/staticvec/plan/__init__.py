"""Planning a run before spending an allocation: its jobs costed by the planning model
(:mod:`staticvec.dag.costs`), and the SLURM submissions it would make."""
