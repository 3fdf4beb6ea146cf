// Control/status registers and performance counters (map: nasa_pkg::Csr*, counter ids
// nasa_pkg::Cnt*). Requests are accepted every cycle; read data returns one cycle later. This is
// the one CSR read decoder of the accelerator: addresses outside the engine's map read
// ext_rdata_i (the batch CSRs of nasa_top_batch_csr, zero when none).
module nasa_csr #(
  parameter nasa_pkg::cfg_t Cfg = nasa_pkg::CfgSim,  // the configuration (nasa_pkg::cfg_t)
  localparam int unsigned Rows = Cfg.rows, Cols = Cfg.cols, MemBytes = Cfg.mem_bytes,
                          InBufBytes = Cfg.in_buf_bytes, KredMax = Cfg.kred_max,
                          BurstMax = Cfg.burst_max, AddrBits = Cfg.addr_bits
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  nasa_pkg::csr_req_t csr_req_i,
  output nasa_pkg::csr_rsp_t csr_rsp_o,
  input  logic [31:0] ext_rdata_i,      // read data of the CSRs outside this map, this cycle
  // to/from the sequencer
  output logic        start_o,          // pulse: start requested while idle
  output logic        batch_o,          // with start_o: a batch run (Ctrl bit 2)
  output logic [31:0] desc_addr_o,
  output logic [31:0] desc_count_o,
  output logic [31:0] win_base_o,
  output logic [31:0] win_limit_o,
  output logic [31:0] scratch_base_o,   // the scratch window (aligned; 0: none)
  input  logic        busy_i,
  input  logic        finish_i,         // pulse: the run ended (err_code_i valid)
  input  logic [7:0]  err_code_i,
  input  logic [31:0] err_index_i,
  input  logic [31:0] layers_done_i,
  input  logic [nasa_pkg::NumCounters*16-1:0] cnt_inc_i,  // per-counter increments this cycle
  output logic        done_o,
  output logic        error_o
);
  localparam int unsigned NC = nasa_pkg::NumCounters;
  // Window bounds are kept clamped to the address space: AddrBits + 1 bits hold 2^AddrBits.
  localparam int unsigned WW = (AddrBits < 32) ? AddrBits + 1 : 32;

  logic [31:0] desc_addr_q, desc_count_q, err_index_q, sc_base_q, sc_mask;
  logic [WW-1:0] win_base_q, win_limit_q, win_wdata;
  logic [7:0] err_code_q;
  logic done_q, error_q;
  logic [63:0] cnt_q [NC];
  logic wr, rd;

  assign csr_rsp_o.ready = 1'b1;
  assign wr              = csr_req_i.valid && csr_req_i.we;
  assign rd              = csr_req_i.valid && !csr_req_i.we;
  assign start_o         = wr && (csr_req_i.addr == 12'(nasa_pkg::CsrCtrl)) &&
                           (csr_req_i.wdata[nasa_pkg::CtrlStartBit] ||
                            csr_req_i.wdata[nasa_pkg::CtrlBatchBit]) && !busy_i;
  assign batch_o         = csr_req_i.wdata[nasa_pkg::CtrlBatchBit];
  assign desc_addr_o  = desc_addr_q;
  assign desc_count_o = desc_count_q;
  assign win_base_o   = 32'(win_base_q);
  assign win_limit_o  = 32'(win_limit_q);
  // ScratchBase keeps the window's base aligned to the scratch's size (none: always 0)
  assign sc_mask        = (Cfg.scratch_bytes == 0) ? '0 : ~(32'(Cfg.scratch_bytes) - 32'd1);
  assign scratch_base_o = sc_base_q;
  if (AddrBits < 32) begin : g_clamp
    assign win_wdata = (csr_req_i.wdata > 32'(1 << AddrBits)) ? WW'(1 << AddrBits)
                                                             : WW'(csr_req_i.wdata);
  end else begin : g_noclamp
    assign win_wdata = csr_req_i.wdata;
  end
  assign done_o       = done_q;
  assign error_o      = error_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      desc_addr_q  <= '0;
      desc_count_q <= '0;
      win_base_q   <= '0;
      win_limit_q  <= '0;
      sc_base_q    <= '0;
      err_code_q   <= '0;
      err_index_q  <= '0;
      done_q       <= 1'b0;
      error_q      <= 1'b0;
    end else begin
      if (wr && !busy_i) begin
        unique case (csr_req_i.addr)
          12'(nasa_pkg::CsrDescAddr):  desc_addr_q <= csr_req_i.wdata;
          12'(nasa_pkg::CsrDescCount): desc_count_q <= csr_req_i.wdata;
          12'(nasa_pkg::CsrWinBase):   win_base_q <= win_wdata;
          12'(nasa_pkg::CsrWinLimit):  win_limit_q <= win_wdata;
          12'(nasa_pkg::CsrScratchBase): sc_base_q <= csr_req_i.wdata & sc_mask;
          12'(nasa_pkg::CsrCtrl): begin
            if (csr_req_i.wdata[nasa_pkg::CtrlClearBit]) begin
              done_q     <= 1'b0;
              error_q    <= 1'b0;
              err_code_q <= '0;
            end
          end
          default: ;
        endcase
      end
      if (start_o) begin
        done_q      <= 1'b0;
        error_q     <= 1'b0;
        err_code_q  <= '0;
        err_index_q <= '0;
      end
      if (finish_i) begin
        done_q      <= 1'b1;
        error_q     <= (err_code_i != '0);
        err_code_q  <= err_code_i;
        err_index_q <= err_index_i;
      end
    end
  end

  for (genvar i = 0; i < NC; i++) begin : g_cnt
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) cnt_q[i] <= '0;
      else if (start_o) cnt_q[i] <= '0;
      else cnt_q[i] <= cnt_q[i] + 64'(cnt_inc_i[i*16 +: 16]);
    end
  end

  logic [31:0] rdata;
  always_comb begin
    rdata = '0;
    unique case (csr_req_i.addr)
      12'(nasa_pkg::CsrStatus):    rdata = {29'd0, error_q, done_q, busy_i};
      12'(nasa_pkg::CsrErrCode):   rdata = {24'd0, err_code_q};
      12'(nasa_pkg::CsrErrIndex):  rdata = err_index_q;
      12'(nasa_pkg::CsrDescAddr):  rdata = desc_addr_q;
      12'(nasa_pkg::CsrDescCount): rdata = desc_count_q;
      12'(nasa_pkg::CsrWinBase):   rdata = 32'(win_base_q);
      12'(nasa_pkg::CsrWinLimit):  rdata = 32'(win_limit_q);
      12'(nasa_pkg::CsrScratchBase): rdata = sc_base_q;
      12'(nasa_pkg::CsrHwShape):   rdata = {16'(Cols), 16'(Rows)};
      12'(nasa_pkg::CsrHwMem):     rdata = {8'(AddrBits), 8'(BurstMax), 16'(MemBytes)};
      12'(nasa_pkg::CsrHwInBuf):   rdata = 32'(InBufBytes);
      12'(nasa_pkg::CsrHwKredMax): rdata = 32'(KredMax);
      12'(nasa_pkg::CsrMagic):     rdata = nasa_pkg::Magic;
      12'(nasa_pkg::CsrLayersDone): rdata = layers_done_i;
      default: begin
        rdata = ext_rdata_i;
        for (int i = 0; i < NC; i++) begin
          if (csr_req_i.addr == 12'(nasa_pkg::CsrCounterBase + 8 * i)) rdata = cnt_q[i][31:0];
          if (csr_req_i.addr == 12'(nasa_pkg::CsrCounterBase + 8 * i + 4)) rdata = cnt_q[i][63:32];
        end
      end
    endcase
  end

  logic rvalid_q;
  logic [31:0] rdata_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rvalid_q <= 1'b0;
      rdata_q  <= '0;
    end else begin
      rvalid_q <= rd;
      rdata_q  <= rdata;
    end
  end
  assign csr_rsp_o.valid = rvalid_q;
  assign csr_rsp_o.rdata = rdata_q;
endmodule
