build-san/cgfw-traffic: tools/traffic.c tests/lib/netprobe.h
tests/lib/netprobe.h:
