# pkc_embed_files(<target> NAMESPACE <ns> BASE <dir> FILES <f>...): a static library
# exposing `<ns>::embeddedFiles()` -> {name relative to BASE, text} for every file, so
# tools find their headers without reading the disk. Rebuilt when any file changes.
function(pkc_embed_files target)
  cmake_parse_arguments(ARG "" "NAMESPACE;BASE" "FILES" ${ARGN})
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${target}.cpp)
  string(REPLACE ";" "|" file_list "${ARG_FILES}")
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DNS=${ARG_NAMESPACE} -DBASE=${ARG_BASE}
            "-DFILES=${file_list}" -P ${PKC_SOURCE_DIR}/cmake/EmbedFilesScript.cmake
    DEPENDS ${ARG_FILES} ${PKC_SOURCE_DIR}/cmake/EmbedFilesScript.cmake
    COMMENT "Embedding ${target}" VERBATIM)
  add_library(${target} STATIC ${out})
  target_include_directories(${target} PUBLIC ${PKC_SOURCE_DIR}/cmake/include)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
