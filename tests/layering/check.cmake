# The layers the build enforces (CMakeLists.txt, comera_layer): compiled with a layer's include
# path, an include of its own layer's header compiles and one of a layer above does not.
# Run by ctest as `layering`: cmake -DCXX=... -DVIEWS=<build>/layers -DHERE=<this folder> -P check.cmake
function(compile layer header expect)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/layering_probe.cpp "#include \"${header}\"\n")
  execute_process(COMMAND ${CXX} -std=c++17 -fsyntax-only -I${VIEWS}/${layer}
                          ${CMAKE_CURRENT_BINARY_DIR}/layering_probe.cpp
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
  if(expect STREQUAL "compiles" AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${layer} should see its own ${header}, but:\n${err}")
  endif()
  if(expect STREQUAL "refused")
    if(rc EQUAL 0)
      message(FATAL_ERROR "${layer} includes ${header} from a layer above, and it compiled")
    endif()
    string(FIND "${err}" "${header}: No such file" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${layer} including ${header} failed, but not for want of the header:\n${err}")
    endif()
  endif()
  message(STATUS "${layer}: #include \"${header}\" ${expect}")
endfunction()

# Headers chosen for including nothing beyond the standard library, so that a failure can only
# mean the layer cannot see them.
compile(comera_kernels core/kernels/fast_kernels.h compiles)
compile(comera_kernels core/models/model_kind.h refused)
compile(comera_util core/util/remove_tree.h compiles)
compile(comera_util core/formats/tt_shape.h refused)
compile(comera_data core/models/model_kind.h refused)
compile(comera_training dataprep/synth_criteo.h refused)
compile(comera_store search/sweep/sweep_spec.h refused)
compile(comera_propose search/propose/gaussian_process.h compiles)
compile(comera_propose search/sweep/sweep_spec.h refused)
