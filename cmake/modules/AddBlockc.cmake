#===- AddBlockc.cmake - thin wrappers over AddMLIR -----------------------===#
#
# Dialect libraries register themselves in BLOCKC_DIALECT_LIBS so that tools
# can link "all dialects" without listing them, and so that the layering rule
# (dialects/ may only depend on MLIR and other dialects/) can be checked.
#
#===----------------------------------------------------------------------===#

function(add_blockc_dialect_library name)
  set_property(GLOBAL APPEND PROPERTY BLOCKC_DIALECT_LIBS ${name})
  add_mlir_library(${ARGV} DISABLE_INSTALL)
endfunction()

function(add_blockc_library name)
  set_property(GLOBAL APPEND PROPERTY BLOCKC_LIBS ${name})
  add_mlir_library(${ARGV} DISABLE_INSTALL)
endfunction()

# Fails the configuration when a library under dialects/ links a non-dialect
# blockc library (the layering rule of docs/Architecture.md).
function(blockc_check_dialect_layering)
  get_property(dialect_libs GLOBAL PROPERTY BLOCKC_DIALECT_LIBS)
  get_property(other_libs GLOBAL PROPERTY BLOCKC_LIBS)
  foreach(lib ${dialect_libs})
    get_target_property(deps ${lib} LINK_LIBRARIES)
    foreach(dep ${deps})
      if(dep IN_LIST other_libs)
        message(FATAL_ERROR
          "layering: dialect library ${lib} must not depend on ${dep}")
      endif()
    endforeach()
  endforeach()
endfunction()
