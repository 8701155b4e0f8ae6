"""What is kept on disk: checkpoints, runs, resume state, snapshots, the shipped models, a subject to look at."""
