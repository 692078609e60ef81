# testpmd commands for scripts/testpmd/replay.sh (read with --cmdline-file).
# Port 0 is net_pcap (rx_pcap = the amrma-pcapgen file), port 1 is net_memif, connected
# to the amrma-dataplane under test. io forwarding passes frames through untouched; with
# "retry", a full memif ring makes the forwarding lcore retry instead of dropping.
# replay.sh then types on stdin: "start" once testpmd's memif port reports link up (its
# own link check does not wait for the memif handshake, and frames sent before it ends
# are dropped), then "stop", "show port stats all" and "quit" once the dataplane has
# counted every frame of the file.
set fwd io retry
set burst tx delay 10 retry 256
show config fwd
