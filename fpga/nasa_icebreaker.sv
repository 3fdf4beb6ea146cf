// iCEBreaker (iCE40 UP5K) board top: the core in its `up5k` configuration (nasa_mcu: the RV32IM
// controller, its firmware RomFile, the dot-product unit), 128 KB of SPRAM main memory, and the
// UART link of docs/uart.md (8N1, ClksPerBit core clocks a bit: 24 MHz / 1 Mbaud = 24) bridged to
// memory and CSRs. The core clock is the PLL's (fpga/nasa_pll.sv: 24 MHz from the 12 MHz
// oscillator); reset is held until the PLL locks. The memory serves the core's port (single-beat
// reads, byte-masked writes) and the bridge's byte port, one request at a time: a request is
// taken in the cycle it is presented when the memory is free (the core first; the bridge's
// requests wait in a register first), a read's data come the cycle after. LEDs: green = idle, red = an error (a rejected frame, or a run that ended
// with an error code) until the next run starts.
module nasa_icebreaker #(
  parameter int unsigned ClksPerBit = 24,
  parameter              RomFile    = "nasa_fw.hex"
) (
  input  logic clk_i,      // 12 MHz oscillator (pin 35, the PLL's pad)
  input  logic uart_rx_i,  // from the host (FTDI)
  output logic uart_tx_o,  // to the host
  output logic led_red_no,
  output logic led_green_no
);
  localparam int unsigned MemBytesTotal = 131072;
  localparam int unsigned PortBytes = nasa_pkg::CfgUp5kMemBytes;  // 4: one SPRAM word

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

  logic b_mreq_valid, b_mreq_ready, b_mreq_we, b_mrsp_valid;
  logic [31:0] b_mreq_addr;
  logic [7:0] b_mreq_wdata, b_mrsp_data;
  logic b_csr_valid, b_csr_ready, b_csr_we;
  logic [31:0] b_csr_addr, b_csr_wdata, b_csr_rdata;
  logic bridge_busy;
  nasa_uart_bridge #(
    .MemBytes (MemBytesTotal),
    .GapCycles(4 * 10 * ClksPerBit)
  ) u_bridge (
    .clk_i       (clk),
    .rst_ni      (rst_n),
    .rx_valid_i  (rx_valid),
    .rx_data_i   (rx_data),
    .tx_valid_o  (tx_valid),
    .tx_ready_i  (tx_ready),
    .tx_data_o   (tx_data),
    .mreq_valid_o(b_mreq_valid),
    .mreq_ready_i(b_mreq_ready),
    .mreq_we_o   (b_mreq_we),
    .mreq_addr_o (b_mreq_addr),
    .mreq_wdata_o(b_mreq_wdata),
    .mrsp_valid_i(b_mrsp_valid),
    .mrsp_data_i (b_mrsp_data),
    .csr_valid_o (b_csr_valid),
    .csr_ready_i (b_csr_ready),
    .csr_we_o    (b_csr_we),
    .csr_addr_o  (b_csr_addr),
    .csr_wdata_o (b_csr_wdata),
    .csr_rdata_i (b_csr_rdata),
    .busy_o      (bridge_busy),
    .error_o     (link_error)
  );

  // ---- the core
  logic c_csr_ready, c_csr_rvalid;
  logic [31:0] c_csr_rdata;
  logic c_req_valid, c_req_ready, c_req_we, c_rsp_valid, c_rsp_ready;
  logic [31:0] c_req_addr;
  logic [7:0] c_req_len;
  logic [PortBytes*8-1:0] c_req_wdata, c_rsp_rdata;
  logic [PortBytes-1:0] c_req_wstrb;
  logic core_busy, core_done, core_error;
  logic c_csr_valid;
  nasa_mcu #(
    .RomFile   (RomFile),
    .Rows      (nasa_pkg::CfgUp5kRows),
    .Cols      (nasa_pkg::CfgUp5kCols),
    .MemBytes  (PortBytes),
    .InBufBytes(nasa_pkg::CfgUp5kInBufBytes),
    .KredMax   (nasa_pkg::CfgUp5kKredMax),
    .BurstMax  (nasa_pkg::CfgUp5kBurstMax),
    .NodeCap   (nasa_pkg::CfgUp5kNodeCap),
    .MaxLayers (nasa_pkg::CfgUp5kMaxLayers),
    .MaxChoices(nasa_pkg::CfgUp5kMaxChoices),
    .MaxCands  (nasa_pkg::CfgUp5kMaxCands),
    .RqLanes   (nasa_pkg::CfgUp5kRqLanes),
    .AddrBits  (nasa_pkg::CfgUp5kAddrBits),
    .DmaInflight(nasa_pkg::CfgUp5kDmaInflight),
    .WTiles    (nasa_pkg::CfgUp5kWTiles)
  ) u_core (
    .clk_i          (clk),
    .rst_ni         (rst_n),
    .csr_valid_i    (c_csr_valid),
    .csr_ready_o    (c_csr_ready),
    .csr_we_i       (b_csr_we),
    .csr_addr_i     (b_csr_addr[11:0]),
    .csr_wdata_i    (b_csr_wdata),
    .csr_rvalid_o   (c_csr_rvalid),
    .csr_rdata_o    (c_csr_rdata),
    .mem_req_valid_o(c_req_valid),
    .mem_req_ready_i(c_req_ready),
    .mem_req_we_o   (c_req_we),
    .mem_req_addr_o (c_req_addr),
    .mem_req_len_o  (c_req_len),
    .mem_req_wdata_o(c_req_wdata),
    .mem_req_wstrb_o(c_req_wstrb),
    .mem_rsp_valid_i(c_rsp_valid),
    .mem_rsp_ready_o(c_rsp_ready),
    .mem_rsp_rdata_i(c_rsp_rdata),
    .busy_o         (core_busy),
    .done_o         (core_done),
    .error_o        (core_error),
    .layer_end_o    ()
  );

  // CSR adapter: the bridge holds a request until it is answered; the core answers reads a
  // cycle after it takes them. CSR addresses beyond the core's 12 bits alias (the host's map).
  typedef enum logic [1:0] {CIdle, CWait, CDone} cstate_e;
  cstate_e cs_q;
  logic [31:0] crd_q;
  assign c_csr_valid = b_csr_valid && (cs_q == CIdle);
  assign b_csr_ready = (cs_q == CDone) || (b_csr_valid && b_csr_we && (cs_q == CIdle) && c_csr_ready);
  assign b_csr_rdata = crd_q;
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      cs_q  <= CIdle;
      crd_q <= '0;
    end else begin
      unique case (cs_q)
        CIdle: if (c_csr_valid && c_csr_ready && !b_csr_we) cs_q <= CWait;
        CWait: begin
          if (c_csr_rvalid) begin
            crd_q <= c_csr_rdata;
            cs_q  <= CDone;
          end
        end
        CDone: cs_q <= CIdle;
        default: cs_q <= CIdle;
      endcase
    end
  end

  // ---- memory controller: one request at a time, the core first
  typedef enum logic [1:0] {MIdle, MWord, MByte} mstate_e;
  mstate_e ms_q;
  logic [1:0] lane_q;    // byte lane of a bridge read
  logic ram_en, ram_we;
  logic [14:0] ram_addr;
  logic [31:0] ram_wdata, ram_rdata;
  logic [3:0] ram_wstrb;

  // the bridge's requests wait in a register (no combinational path from the bridge through
  // the arbiter back into it: the link is slow, the clock is not)
  logic bq_valid_q, bq_we_q;
  logic [16:0] bq_addr_q;
  logic [7:0] bq_wdata_q;
  logic take_core, take_bridge;
  assign take_core    = (ms_q == MIdle) && c_req_valid;
  assign take_bridge  = (ms_q == MIdle) && !c_req_valid && bq_valid_q;
  assign c_req_ready  = take_core;
  assign b_mreq_ready = !bq_valid_q;
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      bq_valid_q <= 1'b0;
      bq_we_q    <= 1'b0;
      bq_addr_q  <= '0;
      bq_wdata_q <= '0;
    end else if (!bq_valid_q) begin
      bq_valid_q <= b_mreq_valid;
      bq_we_q    <= b_mreq_we;
      bq_addr_q  <= b_mreq_addr[16:0];
      bq_wdata_q <= b_mreq_wdata;
    end else if (take_bridge) begin
      bq_valid_q <= 1'b0;
    end
  end

  always_comb begin
    ram_en    = take_core || take_bridge;
    ram_we    = take_core ? c_req_we : bq_we_q;
    ram_addr  = take_core ? c_req_addr[16:2] : bq_addr_q[16:2];
    ram_wdata = take_core ? c_req_wdata : {4{bq_wdata_q}};
    ram_wstrb = take_core ? c_req_wstrb : (4'b0001 << bq_addr_q[1:0]);
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

  // a read's word is on the RAM output the cycle after it was taken (the core takes it then:
  // its response is always ready)
  assign c_rsp_valid  = (ms_q == MWord);
  assign c_rsp_rdata  = ram_rdata;
  assign b_mrsp_valid = (ms_q == MByte);
  assign b_mrsp_data  = ram_rdata[8*lane_q +: 8];

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      ms_q   <= MIdle;
      lane_q <= '0;
    end else begin
      unique case (ms_q)
        MIdle: begin
          if (take_core && !c_req_we) begin
            ms_q <= MWord;
          end else if (take_bridge && !bq_we_q) begin
            lane_q <= bq_addr_q[1:0];
            ms_q   <= MByte;
          end
        end
        default: ms_q <= MIdle;
      endcase
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

  // Address bits above the 128 KB memory / the 12-bit CSR map (the bridge checks memory
  // addresses against MemBytes; the core's are inside its window), and the word offset of the
  // core's aligned requests.
  logic unused_addr;
  assign unused_addr = ^{b_mreq_addr[31:17], b_csr_addr[31:12], c_req_addr[31:17],
                         c_req_addr[1:0], c_req_len, c_rsp_ready};  // (single beats, always taken)
endmodule
