# A profile with round ceilings and fixed costs for test/Driver/roofline.test: 1000 TFLOP/s
# (2000 for fp8),
# 4000 GB/s HBM, 400 GB/s per link direction, 2 us a launch, 1.5 us a flag hop between GPUs.
version 1
device test
handoff intra_sm_ns 60
handoff inter_sm_ns 500
peak tensor_bf16_tflops 1000
peak tensor_f16_tflops 1000
peak tensor_fp8_tflops 2000
peak hbm_gbs 4000
peak link_gbs 400
fixed launch_us 2
fixed link_hop_us 1.5
