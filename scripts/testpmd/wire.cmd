# testpmd commands for scripts/testpmd/wire.sh (read with --cmdline-file).
# Ports 0 and 1 are net_memif servers; one amrma-dataplane connects to each as a client.
# io forwarding with retry makes testpmd the wire between them: port 0 <-> port 1.
# wire.sh types "start" on stdin once both memif links are up, and "stop",
# "show port stats all" and "quit" when the workload ends.
set fwd io retry
set burst tx delay 10 retry 256
show config fwd
