# pkc_generate_collectives(<target>): runs pkc on every shipped collective spec in every
# element type (bf16, f16, f32; and fp8 e4m3, f8E4M3FN, where it only moves bytes) and, where it
# reduces, every reduction (sum, max, min), into
# ${CMAKE_BINARY_DIR}/collectives/<spec>_<dtype>[_<reduce>].cu. Host programs load the .cu at
# run time through pk::Module (NVRTC). Needs PKC_EXECUTABLE (built here or prebuilt).
set(PKC_COLLECTIVES all_reduce all_gather reduce_scatter all_to_all broadcast reduce gather scatter)
set(PKC_REDUCING_COLLECTIVES all_reduce reduce_scatter reduce)
set(PKC_COLLECTIVES_DIR ${CMAKE_BINARY_DIR}/collectives)

function(pkc_generate_collectives target)
  set(outputs)
  foreach(spec ${PKC_COLLECTIVES})
    set(reduces none)
    set(dtypes bf16 f16 f32 f8E4M3FN)
    if(spec IN_LIST PKC_REDUCING_COLLECTIVES)
      set(reduces sum max min)
      set(dtypes bf16 f16 f32)  # fp8 does not reduce
    endif()
    foreach(dtype ${dtypes})
      foreach(red ${reduces})
        set(base ${PKC_COLLECTIVES_DIR}/${spec}_${dtype}_${red})
        if(red STREQUAL "none")
          set(base ${PKC_COLLECTIVES_DIR}/${spec}_${dtype})
        endif()
        set(src ${PKC_SOURCE_DIR}/templates/specs/${spec}.mlir)
        set(deps ${src} ${PKC_SOURCE_DIR}/cmake/PkcSpecVariant.cmake)
        if(TARGET pkc)
          list(APPEND deps pkc)
        endif()
        add_custom_command(OUTPUT ${base}.cu
          COMMAND ${CMAKE_COMMAND} -DSPEC=${src} -DDTYPE=${dtype} -DREDUCE=${red}
                  -DPKC=${PKC_EXECUTABLE} -DOUT_MLIR=${base}.mlir -DOUT_CU=${base}.cu
                  -P ${PKC_SOURCE_DIR}/cmake/PkcSpecVariant.cmake
          DEPENDS ${deps}
          COMMENT "pkc ${spec}.mlir (${dtype}, ${red})" VERBATIM)
        list(APPEND outputs ${base}.cu)
      endforeach()
    endforeach()
  endforeach()
  add_custom_target(${target} DEPENDS ${outputs})
endfunction()
