# A fixed profile for the pass tests (the seeded H200 figures): TMA wins around 1 MiB here,
# so both sides of the ld/st-TMA crossover can be tested whatever the measured profile says.
# Format (runtime/include/pk/runtime/profile.h): '<mechanism> <size_bytes> <sms> <GB/s>',
# sms 0 for the copy engine; 'handoff intra_sm_ns|inter_sm_ns <ns>'.
version 1
device NVIDIA H200 (seeded from HARDWARE.md)
handoff intra_sm_ns 64
handoff inter_sm_ns 832
# copy engine (cudaMemcpyPeerAsync)
copy_engine 1024 0 0.4
copy_engine 65536 0 22
copy_engine 262144 0 93
copy_engine 1048576 0 225
copy_engine 4194304 0 310
copy_engine 16777216 0 367
copy_engine 67108864 0 389
copy_engine 268435456 0 395
copy_engine 1073741824 0 397
# SM ld/st stores, all SMs (528 blocks x 512 threads); the two small sizes assume a ~2 us
# device-initiated round trip (HARDWARE.md: the link moves 1 MiB in under 3 us)
ldst 4096 132 2
ldst 65536 132 30
ldst 1048576 132 193
ldst 4194304 132 300
ldst 16777216 132 351
ldst 268435456 132 369
# SM ld/st stores, 256 MiB, by SM count (1024 threads each)
ldst 268435456 1 39
ldst 268435456 2 76
ldst 268435456 4 151
ldst 268435456 8 301
ldst 268435456 16 327
ldst 268435456 32 353
ldst 268435456 66 361
# TMA: not measured on this pair yet; ParallelKittens reports about 74% of peak (478 GB/s
# nominal -> ~354 GB/s) from about 2 KB with about 15 SMs. Placeholder curve until calibrated.
# TMA bulk stores: ParallelKittens reports ~74% of link peak from ~2 KB per message with ~15
# SMs. These totals are estimates until pk-calibrate measures them on this machine.
tma 65536 16 28
tma 1048576 16 200
tma 16777216 16 340
tma 268435456 16 354
tma 268435456 8 250
tma 268435456 1 40
