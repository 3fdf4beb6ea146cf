// iCEBreaker (iCE40 UP5K) board top: the core in its `up5k` configuration (nasa_mcu: the
// bit-serial RV32I controller, its firmware RomFile, the MAC array on all eight DSPs), 128 KB of
// SPRAM main memory, and the UART link of docs/uart.md (8N1, ClksPerBit core clocks a bit: 24 MHz
// / 1 Mbaud = 24) bridged to memory and CSRs. The core clock is the PLL's (fpga/nasa_pll.sv: 24 MHz from the 12 MHz
// oscillator); reset is held until the PLL locks. The memory (16K rows of 8 bytes) serves the
// core's port (single-beat row reads, byte-masked writes) and the bridge's byte port, a request a
// cycle: the core's are taken in the cycle they are presented, the bridge's (which wait in a
// register first) in a cycle the core does not use; a read's data come the cycle after.
// LEDs: green = idle, red = an error (a rejected frame, or a run that ended with an error code)
// until the next run starts.
module nasa_icebreaker #(
  parameter int unsigned ClksPerBit = 24,
  parameter              RomFile    = "nasa_fw_array.hex",
  parameter bit          Primitive  = 1'b1  // the array's DSPs as SB_MAC16 (0: in fabric, lint)
) (
  input  logic clk_i,      // 12 MHz oscillator (pin 35, the PLL's pad)
  input  logic uart_rx_i,  // from the host (FTDI)
  output logic uart_tx_o,  // to the host
  output logic led_red_no,
  output logic led_green_no
);
  localparam nasa_pkg::cfg_t Cfg = nasa_pkg::CfgUp5k;  // the core's configuration
  localparam int unsigned MemBytesTotal = 131072;
  localparam int unsigned PortBytes = Cfg.mem_bytes;  // 8: one row of the four SPRAMs
  localparam int unsigned PortDW = nasa_pkg::MemBytesMax * 8;     // the port structs' data fields

  // core clock, and the power-on reset: low until the PLL has locked and 15 cycles more
  logic clk, pll_locked;
  nasa_pll u_pll (
    .pad_clk_i(clk_i),
    .clk_o    (clk),
    .locked_o (pll_locked)
  );
  logic [3:0] por_q = '0;
  logic rst_n;
  always_ff @(posedge clk) begin
    if (!pll_locked) por_q <= '0;
    else if (por_q != 4'hF) por_q <= por_q + 4'd1;
  end
  assign rst_n = (por_q == 4'hF);

  // ---- UART and frame bridge
  logic rx_valid, tx_valid, tx_ready, link_error;
  logic [7:0] rx_data, tx_data;
  // the bridge's response bytes wait in a register before the transmitter (no path from the
  // bridge's response logic into the transmitter's load)
  logic tq_valid_q, tq_ready;
  logic [7:0] tq_data_q;
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      tq_valid_q <= 1'b0;
      tq_data_q  <= '0;
    end else if (!tq_valid_q) begin
      tq_valid_q <= tx_valid;
      tq_data_q  <= tx_data;
    end else if (tq_ready) begin
      tq_valid_q <= 1'b0;
    end
  end
  assign tx_ready = !tq_valid_q;
  nasa_uart_rx #(.ClksPerBit(ClksPerBit)) u_rx (
    .clk_i  (clk),
    .rst_ni (rst_n),
    .rx_i   (uart_rx_i),
    .valid_o(rx_valid),
    .data_o (rx_data)
  );
  nasa_uart_tx #(.ClksPerBit(ClksPerBit)) u_tx (
    .clk_i  (clk),
    .rst_ni (rst_n),
    .valid_i(tq_valid_q),
    .ready_o(tq_ready),
    .data_i (tq_data_q),
    .tx_o   (uart_tx_o)
  );

  nasa_pkg::byte_req_t b_mreq;
  nasa_pkg::byte_rsp_t b_mrsp;
  nasa_pkg::csr_req_t b_csr_req;
  nasa_pkg::csr_rsp_t c_csr_rsp;
  logic bridge_busy;
  // (the host reaches main memory below the firmware's RAM, its last McuRamBytes)
  nasa_uart_bridge #(
    .MemBytes (MemBytesTotal - nasa_pkg::McuRamBytes),
    .GapCycles(4 * 10 * ClksPerBit)
  ) u_bridge (
    .clk_i       (clk),
    .rst_ni      (rst_n),
    .rx_valid_i  (rx_valid),
    .rx_data_i   (rx_data),
    .tx_valid_o  (tx_valid),
    .tx_ready_i  (tx_ready),
    .tx_data_o   (tx_data),
    .mreq_o      (b_mreq),
    .mrsp_i      (b_mrsp),
    .csr_req_o   (b_csr_req),
    .csr_rsp_i   (c_csr_rsp),
    .busy_o      (bridge_busy),
    .error_o     (link_error)
  );

  // ---- the core
  nasa_pkg::mem_req_t c_req;
  nasa_pkg::mem_rsp_t c_rsp;
  logic core_busy, core_done, core_error;
  nasa_mcu #(
    .RomFile   (RomFile),
    .Primitive (Primitive),
    .Rows      (Cfg.rows),
    .Cols      (Cfg.cols),
    .MemBytes  (PortBytes),
    .InBufBytes(Cfg.in_buf_bytes),
    .KredMax   (Cfg.kred_max),
    .BurstMax  (Cfg.burst_max),
    .NodeCap   (Cfg.node_cap),
    .MaxLayers (Cfg.max_layers),
    .MaxChoices(Cfg.max_choices),
    .MaxCands  (Cfg.max_cands),
    .RqLanes   (Cfg.rq_lanes),
    .AddrBits  (Cfg.addr_bits),
    .DmaInflight(Cfg.dma_inflight),
    .WTiles    (Cfg.wtiles)
  ) u_core (
    .clk_i          (clk),
    .rst_ni         (rst_n),
    .csr_req_i      (b_csr_req),
    .csr_rsp_o      (c_csr_rsp),
    .mem_req_o      (c_req),
    .mem_rsp_i      (c_rsp),
    .busy_o         (core_busy),
    .done_o         (core_done),
    .error_o        (core_error),
    .layer_end_o    ()
  );

  // ---- memory controller: a request a cycle, the core first; a read's data come the cycle
  // after it was taken, tagged with whose read it was (the core's row or the bridge's byte)
  logic rd_core_q, rd_byte_q;  // the RAM output holds the data of a read taken last cycle
  logic [2:0] lane_q;          // byte lane of a bridge read
  logic ram_en, ram_we;
  logic [13:0] ram_addr;
  logic [63:0] ram_wdata, ram_rdata;
  logic [7:0] ram_wstrb;

  // the bridge's requests wait in a register (no combinational path from the bridge through
  // the arbiter back into it: the link is slow, the clock is not)
  logic bq_valid_q, bq_we_q;
  logic [16:0] bq_addr_q;
  logic [7:0] bq_wdata_q;
  logic take_core, take_bridge;
  assign take_core   = c_req.valid;
  assign take_bridge = !c_req.valid && bq_valid_q;
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      bq_valid_q <= 1'b0;
      bq_we_q    <= 1'b0;
      bq_addr_q  <= '0;
      bq_wdata_q <= '0;
    end else if (!bq_valid_q) begin
      bq_valid_q <= b_mreq.valid;
      bq_we_q    <= b_mreq.we;
      bq_addr_q  <= b_mreq.addr[16:0];
      bq_wdata_q <= b_mreq.wdata;
    end else if (take_bridge) begin
      bq_valid_q <= 1'b0;
    end
  end

  always_comb begin
    ram_en    = take_core || take_bridge;
    ram_we    = take_core ? c_req.we : bq_we_q;
    ram_addr  = take_core ? c_req.addr[16:3] : bq_addr_q[16:3];
    ram_wdata = take_core ? c_req.wdata[63:0] : {8{bq_wdata_q}};
    ram_wstrb = take_core ? c_req.wstrb[7:0] : (8'b0000_0001 << bq_addr_q[2:0]);
  end
  nasa_spram u_mem (
    .clk_i  (clk),
    .en_i   (ram_en),
    .we_i   (ram_we),
    .addr_i (ram_addr),
    .wdata_i(ram_wdata),
    .wstrb_i(ram_wstrb),
    .rdata_o(ram_rdata)
  );

  // the core's requests are always taken (its response is always ready too); the bridge's wait
  // for a cycle the core does not use
  always_comb begin
    c_rsp        = '0;
    c_rsp.ready  = 1'b1;
    c_rsp.valid  = rd_core_q;
    c_rsp.rdata  = PortDW'(ram_rdata);
    b_mrsp.ready = !bq_valid_q;
    b_mrsp.valid = rd_byte_q;
    b_mrsp.rdata = ram_rdata[8*lane_q +: 8];
  end

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      rd_core_q <= 1'b0;
      rd_byte_q <= 1'b0;
      lane_q    <= '0;
    end else begin
      rd_core_q <= take_core && !c_req.we;
      rd_byte_q <= take_bridge && !bq_we_q;
      if (take_bridge) lane_q <= bq_addr_q[2:0];
    end
  end

  // ---- LEDs (active low): green while idle, red from an error until the next run starts
  logic err_q, was_busy_q;
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      err_q      <= 1'b0;
      was_busy_q <= 1'b0;
    end else begin
      was_busy_q <= core_busy;
      if (core_busy && !was_busy_q) err_q <= 1'b0;
      if (link_error || (core_done && core_error)) err_q <= 1'b1;
    end
  end
  assign led_green_no = core_busy || bridge_busy;
  assign led_red_no   = !err_q;

  // Address bits above the 128 KB memory (the bridge checks memory addresses against MemBytes;
  // the core's are inside its window), the byte offset of the core's row-aligned requests, and
  // the port's fields an 8-byte port of single beats, always taken, does not use.
  logic unused_addr;
  assign unused_addr = ^{b_mreq.addr[31:17], c_req.addr[31:17], c_req.addr[2:0], c_req.len,
                         c_req.rsp_ready, c_req.wdata[PortDW-1:64], c_req.wstrb[PortDW/8-1:8]};
endmodule
