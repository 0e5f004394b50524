# Man pages from the command's own --help (help2man, Debian's help2man),
# generated at build time: multilane(1) and one page per subcommand,
# compressed as Debian wants them.  Without help2man (or in the sanitizer
# build, whose programs are not installed) there are no man pages.
find_program(HELP2MAN_EXECUTABLE help2man)
find_program(GZIP_EXECUTABLE gzip)
set(_man_default OFF)
if(HELP2MAN_EXECUTABLE AND GZIP_EXECUTABLE AND NOT MULTILANE_SANITIZE AND NOT CMAKE_CROSSCOMPILING)
  set(_man_default ON)
endif()
option(MULTILANE_MAN "Generate man pages with help2man" ${_man_default})
if(NOT MULTILANE_MAN)
  message(STATUS "multilane: no man pages (MULTILANE_MAN=OFF; they need help2man and gzip, and are not made in the sanitizer build)")
  return()
endif()
if(NOT HELP2MAN_EXECUTABLE)
  message(FATAL_ERROR "MULTILANE_MAN=ON but help2man was not found: apt-get install help2man, or -DMULTILANE_MAN=OFF")
endif()

set(_pages "")
set(_man_dir ${CMAKE_CURRENT_BINARY_DIR}/man)
foreach(_sub "" tune run show export import withdraw doctor report history resolve)
  if(_sub STREQUAL "")
    set(_page multilane)
    set(_name "tuned multi-lane MPI_Allreduce: tune, run, report")
  else()
    set(_page multilane-${_sub})
    set(_name "multilane ${_sub}")
  endif()
  add_custom_command(OUTPUT ${_man_dir}/${_page}.1.gz
    COMMAND ${CMAKE_COMMAND} -DHELP2MAN=${HELP2MAN_EXECUTABLE} -DGZIP=${GZIP_EXECUTABLE}
            -DCOMMAND=$<TARGET_FILE:multilane> -DSUBCOMMAND=${_sub} -DPAGE=${_page} -DVERSION=${PROJECT_VERSION}
            -DOUT=${_man_dir} -P ${CMAKE_CURRENT_SOURCE_DIR}/help2man_page.cmake
    DEPENDS multilane ${CMAKE_CURRENT_SOURCE_DIR}/help2man_page.cmake
    COMMENT "man page ${_page}(1)" VERBATIM)
  list(APPEND _pages ${_man_dir}/${_page}.1.gz)
endforeach()
add_custom_target(man_pages ALL DEPENDS ${_pages})
install(FILES ${_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT multilane)
