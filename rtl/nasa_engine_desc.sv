// Engine unit: the descriptor register. The 64 bytes of a descriptor read job (DMA destination
// DstDesc) land here; in ext mode (batch runs) the first decode cycle adds the scheduler's X / Y
// / logits addresses or the image's scratch offset S to the template's patched address fields
// (PATCH bits; nasa::patch_template, sw/base/desc.cpp), and a packed template's Images is cut to
// the images left in the mini-batch.
// Contract: desc_o is stable from the last byte's arrival until the next descriptor job.
module nasa_engine_desc #(
  parameter int unsigned MemBytes = 32
) (
  input  logic                  clk_i,
  input  logic                  we_i,     // a DstDesc response beat
  input  logic [31:0]           idx_i,    // its beat index within the job
  input  logic [MemBytes*8-1:0] data_i,
  input  logic                  patch_i,  // apply the PATCH bits now (ext mode, decode step 0)
  input  logic [31:0]           x_i,
  input  logic [31:0]           y_i,
  input  logic [31:0]           l_i,
  input  logic [31:0]           s_i,
  input  logic [7:0]            n_i,      // images left in the mini-batch: Images at most that
  output nasa_pkg::desc_t       desc_o
);
  localparam int unsigned OffW     = $clog2(MemBytes);
  localparam int unsigned DescBits = nasa_pkg::DescBytes * 8;

  logic [DescBits-1:0] desc_q;
  logic [nasa_pkg::DescPatchWidth-1:0] patch;
  assign patch = desc_q[nasa_pkg::DescPatchWord*32 + nasa_pkg::DescPatchLsb +:
                        nasa_pkg::DescPatchWidth];

  // what each patched address field adds: the template holds an offset from X, Y, L (0, or a row
  // band's) or the image-0 scratch address S is added to
  logic [31:0] in_add, in2_add, out_add;
  assign in_add  = patch[nasa_pkg::PatchInFromXBit] ? x_i :
                   (patch[nasa_pkg::PatchInPlusSBit] ? s_i : 32'd0);
  assign in2_add = patch[nasa_pkg::PatchIn2FromXBit] ? x_i : 32'd0;
  assign out_add = patch[nasa_pkg::PatchOutFromLBit] ? l_i :
                   (patch[nasa_pkg::PatchOutFromYBit] ? y_i :
                    (patch[nasa_pkg::PatchOutPlusSBit] ? s_i : 32'd0));

  always_ff @(posedge clk_i) begin
    for (int b = 0; b < nasa_pkg::DescBytes; b++) begin
      if (we_i && (32'(b) >> OffW) == idx_i) begin
        desc_q[b*8 +: 8] <= data_i[(b % MemBytes)*8 +: 8];
      end
    end
    if (patch_i) begin
      desc_q[nasa_pkg::DescInAddrWord*32 +: 32] <=
          desc_q[nasa_pkg::DescInAddrWord*32 +: 32] + in_add;
      desc_q[nasa_pkg::DescIn2AddrWord*32 +: 32] <=
          desc_q[nasa_pkg::DescIn2AddrWord*32 +: 32] + in2_add;
      desc_q[nasa_pkg::DescOutAddrWord*32 +: 32] <=
          desc_q[nasa_pkg::DescOutAddrWord*32 +: 32] + out_add;
      if (desc_q[nasa_pkg::DescImagesWord*32 + nasa_pkg::DescImagesLsb +: 8] > n_i) begin
        desc_q[nasa_pkg::DescImagesWord*32 + nasa_pkg::DescImagesLsb +: 8] <= n_i;
      end
    end
  end
  assign desc_o = desc_q;

  logic unused_patch;
  assign unused_patch = ^patch[nasa_pkg::DescPatchWidth-1:6];  // PATCH bits not defined

`ifndef SYNTHESIS
  initial begin
    assert ($bits(nasa_pkg::desc_t) == DescBits)
      else $error("desc_t is not DescBytes bytes");
  end
`endif
endmodule
