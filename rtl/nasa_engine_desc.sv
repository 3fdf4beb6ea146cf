// Engine unit: the descriptor register. The 64 bytes of a descriptor read job (DMA destination
// DstDesc) land here; in ext mode (batch runs) the first decode cycle substitutes the
// template's patched address fields (PATCH bits) with the scheduler's X / Y / logits addresses
// or adds the image's scratch offset S to them (nasa::patch_template, sw/base/desc.cpp).
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
  output nasa_pkg::desc_t       desc_o
);
  localparam int unsigned OffW     = $clog2(MemBytes);
  localparam int unsigned DescBits = nasa_pkg::DescBytes * 8;

  logic [DescBits-1:0] desc_q;
  logic [nasa_pkg::DescPatchWidth-1:0] patch;
  assign patch = desc_q[nasa_pkg::DescPatchWord*32 + nasa_pkg::DescPatchLsb +:
                        nasa_pkg::DescPatchWidth];

  always_ff @(posedge clk_i) begin
    for (int b = 0; b < nasa_pkg::DescBytes; b++) begin
      if (we_i && (32'(b) >> OffW) == idx_i) begin
        desc_q[b*8 +: 8] <= data_i[(b % MemBytes)*8 +: 8];
      end
    end
    if (patch_i) begin
      if (patch[nasa_pkg::PatchInFromXBit]) begin
        desc_q[nasa_pkg::DescInAddrWord*32 +: 32] <= x_i;
      end else if (patch[nasa_pkg::PatchInPlusSBit]) begin
        desc_q[nasa_pkg::DescInAddrWord*32 +: 32] <=
            desc_q[nasa_pkg::DescInAddrWord*32 +: 32] + s_i;
      end
      if (patch[nasa_pkg::PatchIn2FromXBit]) begin
        desc_q[nasa_pkg::DescIn2AddrWord*32 +: 32] <= x_i;
      end
      if (patch[nasa_pkg::PatchOutFromLBit]) begin
        desc_q[nasa_pkg::DescOutAddrWord*32 +: 32] <= l_i;
      end else if (patch[nasa_pkg::PatchOutFromYBit]) begin
        desc_q[nasa_pkg::DescOutAddrWord*32 +: 32] <= y_i;
      end else if (patch[nasa_pkg::PatchOutPlusSBit]) begin
        desc_q[nasa_pkg::DescOutAddrWord*32 +: 32] <=
            desc_q[nasa_pkg::DescOutAddrWord*32 +: 32] + s_i;
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
