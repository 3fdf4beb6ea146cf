// The instruction fields and opcodes of the board's controller cores (nasa_mcu_cpu,
// nasa_mcu_cpu_serial), decoded from the held instruction `ir`; included in both.
  logic [6:0] opc, f7;
  logic [2:0] f3;
  logic [4:0] rd, rs1, rs2;
  assign opc = ir[6:0];
  assign rd  = ir[11:7];
  assign f3  = ir[14:12];
  assign rs1 = ir[19:15];
  assign rs2 = ir[24:20];
  assign f7  = ir[31:25];
  localparam logic [6:0] OpLui = nasa_rv_pkg::OpLui, OpAuipc = nasa_rv_pkg::OpAuipc,
    OpJal = nasa_rv_pkg::OpJal, OpJalr = nasa_rv_pkg::OpJalr, OpBr = nasa_rv_pkg::OpBr,
    OpLd = nasa_rv_pkg::OpLd, OpSt = nasa_rv_pkg::OpSt, OpImm = nasa_rv_pkg::OpImm,
    OpReg = nasa_rv_pkg::OpReg, OpFence = nasa_rv_pkg::OpFence;
