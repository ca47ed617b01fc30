# Writes OUT, a header with the commit of the checkout SOURCE and whether tracked files differ
# from it, at build time (run by the comera_stamp target on every build). The header is
# rewritten only when its text changes, so an unchanged checkout rebuilds nothing.
#   cmake -DSOURCE=<checkout> -DOUT=<header> -P stamp_commit.cmake
find_package(Git QUIET)
set(commit "unknown")
set(dirty 0)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE} rev-parse HEAD
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND head)
    set(commit ${head})
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE} status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE changes ERROR_QUIET)
    if(changes)
      set(dirty 1)
    endif()
  endif()
endif()
set(text "#pragma once
// Written at build time by cmake/stamp_commit.cmake: what this binary was built from.
#define COMERA_BUILD_COMMIT \"${commit}\"
#define COMERA_BUILD_DIRTY ${dirty}
")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
