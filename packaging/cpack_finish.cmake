# CPACK_POST_BUILD_SCRIPTS: after CPack has archived the staged tree
# (CPACK_TEMPORARY_DIRECTORY, the staged top directory), checks that the tree needs exactly the glibc its
# name says, rewrites the archive reproducibly (repack_tarball.py: sorted entries, owner
# root, mtimes SOURCE_DATE_EPOCH, no gzip timestamp), and writes <tarball>.sha256 in
# sha256sum's format beside the final tarball.
execute_process(COMMAND "${DUO_PYTHON}" "${DUO_PACKAGING_DIR}/glibc_floor.py"
                        "${CPACK_TEMPORARY_DIRECTORY}" --objdump "${DUO_OBJDUMP}"
                        --expect "${DUO_GLIBC_FLOOR}"
                OUTPUT_QUIET RESULT_VARIABLE duo_floor_check)
if(NOT duo_floor_check EQUAL 0)
  message(FATAL_ERROR "the packed tree's glibc floor is not ${DUO_GLIBC_FLOOR}")
endif()
foreach(duo_package IN LISTS CPACK_PACKAGE_FILES)
  execute_process(COMMAND "${DUO_PYTHON}" "${DUO_PACKAGING_DIR}/repack_tarball.py"
                          "${CPACK_TEMPORARY_DIRECTORY}" "${duo_package}"
                          "${DUO_SOURCE_DATE_EPOCH}"
                  RESULT_VARIABLE duo_repack_result)
  if(NOT duo_repack_result EQUAL 0)
    message(FATAL_ERROR "repack_tarball.py failed for ${duo_package}")
  endif()
  file(SHA256 "${duo_package}" duo_hash)
  get_filename_component(duo_name "${duo_package}" NAME)
  file(WRITE "${CPACK_PACKAGE_DIRECTORY}/${duo_name}.sha256" "${duo_hash}  ${duo_name}\n")
  message(STATUS "duodb: ${duo_name} (glibc >= ${DUO_GLIBC_FLOOR}), sha256 ${duo_hash}")
endforeach()
