# cmake -P script: writes a copy of a collective spec with another element type and
# reduction, then runs pkc on it. -DSPEC -DDTYPE -DREDUCE -DPKC -DOUT_MLIR -DOUT_CU
file(READ ${SPEC} text)
string(REPLACE "bf16" "${DTYPE}" text "${text}")
string(REPLACE "<sum>" "<${REDUCE}>" text "${text}")
file(WRITE ${OUT_MLIR} "${text}")
execute_process(COMMAND ${PKC} ${OUT_MLIR} -o ${OUT_CU} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkc failed on ${OUT_MLIR} (${rc}): ${PKC} ${OUT_MLIR} -o ${OUT_CU}")
endif()
