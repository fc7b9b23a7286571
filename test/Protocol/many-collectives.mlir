// RUN: pkc-opt --pk-to-device -split-input-file -verify-diagnostics %s | FileCheck %s
// Scale: kernels with 50 collectives, lowered to 50 workers, each with its own flags.

// Tests that 50 all-gathers of one input into 50 outputs verify: every worker's protocol
// is complete and the workers touch no common buffer except the input, which they only read.
// CHECK-LABEL: pk.kernel @fifty_all_gathers
// CHECK-COUNT-50: pk.worker <communicator>
// CHECK-NOT: pk.worker
pk.kernel @fifty_all_gathers(%x: !pk.sym<?xbf16>, %y0: !pk.sym<?xbf16>, %y1: !pk.sym<?xbf16>,
    %y2: !pk.sym<?xbf16>, %y3: !pk.sym<?xbf16>, %y4: !pk.sym<?xbf16>, %y5: !pk.sym<?xbf16>,
    %y6: !pk.sym<?xbf16>, %y7: !pk.sym<?xbf16>, %y8: !pk.sym<?xbf16>, %y9: !pk.sym<?xbf16>,
    %y10: !pk.sym<?xbf16>, %y11: !pk.sym<?xbf16>, %y12: !pk.sym<?xbf16>, %y13: !pk.sym<?xbf16>,
    %y14: !pk.sym<?xbf16>, %y15: !pk.sym<?xbf16>, %y16: !pk.sym<?xbf16>, %y17: !pk.sym<?xbf16>,
    %y18: !pk.sym<?xbf16>, %y19: !pk.sym<?xbf16>, %y20: !pk.sym<?xbf16>, %y21: !pk.sym<?xbf16>,
    %y22: !pk.sym<?xbf16>, %y23: !pk.sym<?xbf16>, %y24: !pk.sym<?xbf16>, %y25: !pk.sym<?xbf16>,
    %y26: !pk.sym<?xbf16>, %y27: !pk.sym<?xbf16>, %y28: !pk.sym<?xbf16>, %y29: !pk.sym<?xbf16>,
    %y30: !pk.sym<?xbf16>, %y31: !pk.sym<?xbf16>, %y32: !pk.sym<?xbf16>, %y33: !pk.sym<?xbf16>,
    %y34: !pk.sym<?xbf16>, %y35: !pk.sym<?xbf16>, %y36: !pk.sym<?xbf16>, %y37: !pk.sym<?xbf16>,
    %y38: !pk.sym<?xbf16>, %y39: !pk.sym<?xbf16>, %y40: !pk.sym<?xbf16>, %y41: !pk.sym<?xbf16>,
    %y42: !pk.sym<?xbf16>, %y43: !pk.sym<?xbf16>, %y44: !pk.sym<?xbf16>, %y45: !pk.sym<?xbf16>,
    %y46: !pk.sym<?xbf16>, %y47: !pk.sym<?xbf16>, %y48: !pk.sym<?xbf16>,
    %y49: !pk.sym<?xbf16>) {
  pk.coll.all_gather %x into %y0 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y1 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y2 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y3 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y4 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y5 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y6 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y7 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y8 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y9 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y10 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y11 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y12 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y13 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y14 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y15 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y16 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y17 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y18 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y19 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y20 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y21 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y22 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y23 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y24 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y25 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y26 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y27 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y28 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y29 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y30 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y31 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y32 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y33 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y34 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y35 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y36 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y37 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y38 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y39 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y40 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y41 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y42 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y43 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y44 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y45 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y46 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y47 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y48 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y49 : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}

// -----

// Tests that 50 all-gathers into one output are ordered (each writes what the previous one
// wrote): one worker with a grid-wide barrier before each of the 49 later ones, proved.
// CHECK-LABEL: pk.kernel @fifty_into_one
// CHECK-COUNT-49: pk.sync.flag {{[0-9]+}} <grid>
pk.kernel @fifty_into_one(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xbf16>) {
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}
