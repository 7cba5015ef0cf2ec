//===- SharedLibrary.cpp - LLVM dialect to a native shared library --------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// Translates the LLVM-dialect module of a compiled model to LLVM IR, emits an
// object file for the host in-process (LLVM's TargetMachine, PIC), and links
// it into a shared library with ld.lld from LLVM 22. The library depends on
// the memfmt runtime (DT_NEEDED) and finds it through its RUNPATH.
//
//===----------------------------------------------------------------------===//

#include "memfmt/Target/SharedLibrary.h"
#include "memfmt/Support/OutputFile.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

LogicalResult mlir::memfmt::emitObjectFile(ModuleOp module,
                                           StringRef objectPath,
                                           StringRef cpu) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "memfmt_model");
  if (!llvmModule)
    return module.emitError() << "translation to LLVM IR failed";

  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError() << "no LLVM target for " << triple.str() << ": "
                              << error;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu.empty() ? llvm::sys::getHostCPUName() : cpu, "",
      llvm::TargetOptions(),
      llvm::Reloc::PIC_));
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());

  std::error_code ec;
  llvm::ToolOutputFile out(objectPath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return module.emitError() << "cannot write " << objectPath << ": "
                              << ec.message();
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, out.os(), nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return module.emitError() << "the target cannot emit object files";
  pm.run(*llvmModule);
  if (std::optional<std::string> error = mlir::memfmt::keepOutput(out))
    return module.emitError()
           << "cannot write " << objectPath << ": " << *error;
  return success();
}

LogicalResult mlir::memfmt::linkSharedLibrary(Location loc,
                                              StringRef objectPath,
                                              StringRef libraryPath,
                                              StringRef runtimeLibrary) {
  llvm::ErrorOr<std::string> lld = llvm::sys::findProgramByName(
      "ld.lld", {MEMFMT_LLVM_TOOLS_DIR});
  if (!lld)
    lld = llvm::sys::findProgramByName("ld.lld-22");
  if (!lld)
    return emitError(loc) << "cannot find ld.lld (install lld-22)";
  std::string runtimeDir = llvm::sys::path::parent_path(runtimeLibrary).str();
  SmallVector<StringRef> args = {*lld,         "-shared",   "-o",
                                 libraryPath,  objectPath,  runtimeLibrary,
                                 "-rpath",     runtimeDir,  "--as-needed"};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*lld, args, std::nullopt, {}, 0, 0,
                                     &message);
  if (rc != 0)
    return emitError(loc) << "linking " << libraryPath << " failed ("
                          << (message.empty() ? "exit " + std::to_string(rc)
                                              : message)
                          << ")";
  return success();
}
