# MultilaneScriptCases.cmake: the end-to-end scripts name their own cases.
# A script (one per feature: tests/slurm/test_*.py, launcher/e2e/test_*.py)
# prints its case names with --list (tests/e2e.py, listed()); the
# CMakeLists.txt beside it adds one test per name, so a case is named once,
# in its script.  Editing a script re-runs the configuration.

# mla_script_cases(<var> <script>): sets <var> to the case names <script>
# prints with --list; the configuration fails if it cannot list them.
function(mla_script_cases var script)
  execute_process(COMMAND /usr/bin/python3 ${script} --list
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0 OR out STREQUAL "")
    message(FATAL_ERROR "${script} --list gave no case names (exit ${rc}): ${err}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${script})
  string(REPLACE "\n" ";" out "${out}")
  set(${var} ${out} PARENT_SCOPE)
endfunction()
