# CPACK_PRE_BUILD_SCRIPTS: runs on the staged tree before it is archived. Fixed modes
# (0755 directories and executables, 0644 the rest) and every mtime set to
# SOURCE_DATE_EPOCH, so two builds of one commit give the same bytes whatever the umask
# or the time of the build.
execute_process(COMMAND "${DUO_PYTHON}" "${DUO_PACKAGING_DIR}/normalize_tree.py"
                        "${CPACK_TEMPORARY_DIRECTORY}" "${DUO_SOURCE_DATE_EPOCH}"
                RESULT_VARIABLE duo_normalize_result)
if(NOT duo_normalize_result EQUAL 0)
  message(FATAL_ERROR "normalize_tree.py failed")
endif()
