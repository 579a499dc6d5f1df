"""One program (a warpsim program or a PTX kernel) on the GPU and on the simulator, seed by seed, compared."""
