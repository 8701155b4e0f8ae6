"""Work that runs in the background on a shared server: the job classes, their slots, owners and budget."""
