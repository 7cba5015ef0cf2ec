//===- memfmt-opt.cpp - mlir-opt with the memfmt dialect ------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The opt-style driver: mlir-opt's command line and every upstream pass,
// plus the memfmt dialect and its passes. Registered dialects are memfmt,
// func, arith and tensor, which is what memfmt programs use, and those the
// lowering produces (memref, cf, llvm), so that each lowering step can be
// tested on its own input.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Conversion/Passes.h"
#include "memfmt/Dialect/MemFmt/IR/MemFmtDialect.h"
#include "memfmt/Dialect/MemFmt/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::memfmt::registerMemFmtPasses();
  mlir::memfmt::registerMemFmtPipelines();
  mlir::memfmt::registerMemFmtConversionPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::memfmt::MemFmtDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect,
                  mlir::memref::MemRefDialect, mlir::cf::ControlFlowDialect,
                  mlir::LLVM::LLVMDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "memfmt optimizer driver\n", registry));
}
