# help2man_page.cmake: one man page from `multilane [SUBCOMMAND] --help`
# (cmake -P; ManPages.cmake passes HELP2MAN GZIP COMMAND SUBCOMMAND PAGE
# VERSION OUT).  help2man runs a program by name: a two-line wrapper script
# stands for `multilane SUBCOMMAND`.
file(MAKE_DIRECTORY ${OUT}/wrappers)
set(_program ${COMMAND})
if(SUBCOMMAND)
  set(_program ${OUT}/wrappers/${PAGE})
  file(WRITE ${_program} "#!/bin/sh\nexec '${COMMAND}' ${SUBCOMMAND} \"$@\"\n")
  file(CHMOD ${_program} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  set(_name "--name=the ${SUBCOMMAND} subcommand of multilane(1)")
  set(_see "${OUT}/wrappers/${PAGE}.h2m")
  file(WRITE ${_see} "[SEE ALSO]\nmultilane(1); the guides in /usr/share/doc/multilane (user.md, admin.md).\n")
else()
  set(_name "--name=tuned multi-lane MPI_Allreduce: tune a node type once, run jobs with its profile")
  set(_see "${OUT}/wrappers/multilane.h2m")
  file(WRITE ${_see} "[SEE ALSO]\nmultilane-tune(1), multilane-run(1), multilane-show(1), multilane-export(1), "
       "multilane-import(1), multilane-withdraw(1), multilane-doctor(1), multilane-report(1), multilane-history(1), multilane-resolve(1); the guides in "
       "/usr/share/doc/multilane (user.md, admin.md).\n")
endif()
execute_process(COMMAND ${HELP2MAN} --no-info --no-discard-stderr --version-string=${VERSION} ${_name}
                        --include=${_see} --output=${OUT}/${PAGE}.1 ${_program}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed for ${PAGE}: ${err}")
endif()
# Debian wants compressed pages, with no timestamp inside (reproducible).
execute_process(COMMAND ${GZIP} -9nf ${OUT}/${PAGE}.1 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip failed for ${PAGE}.1")
endif()
