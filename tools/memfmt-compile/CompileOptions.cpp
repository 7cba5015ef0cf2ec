//===- CompileOptions.cpp - memfmt-compile's flags ------------------------===//
//
// Part of the memfmt project.
//
//===----------------------------------------------------------------------===//
//
// The definitions and help texts of the flags CompileOptions.h declares.
// The flags the compile pipeline takes spell their values as its options
// do (the value lists of Passes.h).
//
//===----------------------------------------------------------------------===//

#include "CompileOptions.h"

using namespace mlir::memfmt;
namespace cl = llvm::cl;

namespace memfmt::compile {

cl::OptionCategory toolCategory("memfmt-compile options");

cl::opt<std::string> inputFile(cl::Positional, cl::init(""),
                               cl::desc("[FILE.mlir | FILE.onnx]"),
                               cl::cat(toolCategory));

// The description names the zoo (resnetModelNames()); main sets it.
cl::opt<std::string> modelName("model", cl::value_desc("NAME"),
                               cl::cat(toolCategory));

cl::opt<MemoryFormat> memoryFormat(
    "memory-format",
    cl::desc("Memory format the model runs in (default channels-last)"),
    modelMemoryFormatValues(), cl::init(MemoryFormat::ChannelsLast),
    cl::cat(toolCategory));

cl::opt<MemoryFormat> inputFormat(
    "input-format",
    cl::desc("Memory format of the input the caller passes (default "
             "contiguous)"),
    modelMemoryFormatValues(), cl::init(MemoryFormat::Contiguous),
    cl::cat(toolCategory));

cl::opt<int64_t> batchSize("batch", cl::init(1), cl::value_desc("N"),
                           cl::desc("Batch size of a zoo model (default 1), "
                                    "or of an ONNX model's dynamic batch"),
                           cl::cat(toolCategory));
cl::list<std::string>
    inputShapes("input-shape", cl::value_desc("NAME=DIMS"),
                cl::desc("Shape of an ONNX model's input NAME (its dynamic "
                         "dimensions), as 1x3x224x224"),
                cl::cat(toolCategory));
cl::opt<int64_t> height("height", cl::init(224), cl::value_desc("H"),
                        cl::desc("Input height of a zoo model (default 224)"),
                        cl::cat(toolCategory));
cl::opt<int64_t> width("width", cl::init(224), cl::value_desc("W"),
                       cl::desc("Input width of a zoo model (default 224)"),
                       cl::cat(toolCategory));
cl::opt<int64_t>
    numClasses("num-classes", cl::init(1000), cl::value_desc("N"),
               cl::desc("Classes of a zoo model's fc layer (torchvision's "
                        "num_classes; default 1000)"),
               cl::cat(toolCategory));

cl::opt<CompileTarget>
    target("target", cl::desc("Device the model runs on (default cpu)"),
           compileTargetValues(), cl::init(CompileTarget::Cpu),
           cl::cat(toolCategory));

cl::opt<ComputePrecision> precision(
    "precision",
    cl::desc("Element type of activations and parameters (default f32)"),
    computePrecisionValues(), cl::init(ComputePrecision::F32),
    cl::cat(toolCategory));

cl::opt<std::string>
    weightsOption("weights", cl::init("synthetic:0"),
                  cl::value_desc("FILE.safetensors | synthetic[:SEED]"),
                  cl::desc("Weight source: a safetensors file with "
                           "torchvision state_dict keys, or seeded "
                           "synthetic values (default synthetic:0)"),
                  cl::cat(toolCategory));

cl::opt<bool> fusion("fusion", cl::init(true),
                     cl::desc("Fold batch norms into convolutions and fuse "
                              "residual adds and relus into them "
                              "(memfmt-fuse-conv; with --train, into the "
                              "training batch norms on the CPU, "
                              "memfmt-fuse-training; default on, "
                              "--fusion=false to turn off)"),
                     cl::cat(toolCategory));

cl::opt<int64_t> tileBatchBytes(
    "tile-batch-bytes", cl::init(16 << 20), cl::value_desc("BYTES"),
    cl::desc("CPU inference: run the first layers one sub-batch at a time "
             "while their activations span more than BYTES, so that they "
             "stay in cache (memfmt-tile-batch; default 16 MiB, 0 turns it "
             "off)"),
    cl::cat(toolCategory));

cl::opt<int64_t> subBatch(
    "sub-batch", cl::init(0), cl::value_desc("N"),
    cl::desc("CPU inference: run every layer that computes each sample "
             "alone N samples at a time, whatever the sizes (N must divide "
             "the batch; default: chosen by --tile-batch-bytes)"),
    cl::cat(toolCategory));

cl::opt<std::string> outputDir("o", cl::Required, cl::value_desc("DIR"),
                               cl::desc("Output directory"),
                               cl::cat(toolCategory));

cl::opt<bool> layoutOnly(
    "layout-only", cl::init(false),
    cl::desc("Stop after the layout passes: DIR gets input.mlir, model.mlir "
             "and the layout reports, no library or manifest"),
    cl::cat(toolCategory));
} // namespace memfmt::compile
