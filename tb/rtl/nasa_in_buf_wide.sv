// Test-only (tb/rtlunit_in_buf_wide.cpp): nasa_in_buf as the engine uses it, each read port
// returning Width = 16 consecutive bytes from any byte address of 32-byte words (a read may span
// two words), on a 4 KB buffer with 4 ports.
module nasa_in_buf_wide #(
  localparam int unsigned Bytes    = 4096,
  localparam int unsigned MemBytes = 32,
  localparam int unsigned NumPorts = 4,
  localparam int unsigned Width    = 16,
  localparam int unsigned AW       = $clog2(Bytes)
) (
  input  logic                        clk_i,
  input  logic                        we_i,
  input  logic [AW-1:0]               waddr_i,
  input  logic [MemBytes*8-1:0]       wdata_i,
  input  logic [NumPorts*AW-1:0]      raddr_i,
  output logic [NumPorts*Width*8-1:0] rdata_o
);
  nasa_in_buf #(
    .Bytes   (Bytes),
    .MemBytes(MemBytes),
    .NumPorts(NumPorts),
    .Width   (Width)
  ) u_buf (
    .clk_i  (clk_i),
    .we_i   (we_i),
    .waddr_i(waddr_i),
    .wdata_i(wdata_i),
    .raddr_i(raddr_i),
    .rdata_o(rdata_o)
  );
endmodule
