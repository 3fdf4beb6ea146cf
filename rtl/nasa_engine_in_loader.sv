// Engine unit: the input loader. Segments of input, each read in Chunk-byte jobs: the whole
// input (and Add's second input at offset offb; a folded residual first, then the input at
// offb; packed images: image i's input from in + i*istride at i*offb), or with the pixel gather
// one segment of Cin
// bytes per used pixel into cpad-byte slots; written at the layer's place ld_ib_i in the input
// buffer (a ring), its arrivals counted by layer parity (the job's flag). Contract: a job request
// (req_valid_o, req_o) holds until granted, unless the run stops; done_o once every job of the
// newest started layer is issued; a_loaded_o: bytes arrived of the layer of parity a_par_i.
module nasa_engine_in_loader #(
  parameter nasa_pkg::cfg_t Cfg = nasa_pkg::CfgSim,  // the configuration (nasa_pkg::cfg_t)
  localparam int unsigned Rows = Cfg.rows, MemBytes = Cfg.mem_bytes, InBufBytes = Cfg.in_buf_bytes,
                          BurstMax = Cfg.burst_max, AddrBits = Cfg.addr_bits
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      ld_start_i,  // a layer starts loading (cfg_i valid)
  input  nasa_engine_pkg::il_cfg_t  cfg_i,
  input  logic                      ld_par_i,    // the loading layer's parity (from ld_start_i)
  input  logic [$clog2(InBufBytes)-1:0] ld_ib_i,  // and its place in the buffer
  input  logic                      stop_i,
  output logic                      req_valid_o,
  output nasa_engine_pkg::job_t     req_o,
  input  logic                      grant_i,
  output logic                      done_o,
  input  logic                      in_we_i,     // an input-buffer response beat
  input  logic                      in_flag_i,   // its layer parity
  input  logic                      a_par_i,
  output logic [nasa_engine_pkg::LyOw-1:0] a_loaded_o
);
  localparam int unsigned IAW   = $clog2(InBufBytes);
  localparam int unsigned AW    = AddrBits;
  localparam int unsigned OW    = $clog2((2 * Rows + 16) * InBufBytes) + 1;
  localparam int unsigned Chunk = BurstMax * MemBytes;  // input chunk per read job
  localparam int unsigned LAW   = nasa_engine_pkg::LyAw;
  localparam int unsigned LOW   = nasa_engine_pkg::LyOw;
  localparam int unsigned LBW   = nasa_engine_pkg::LyBw;

  logic il_region_q, il_done_q;
  logic [OW-1:0] il_off_q, il_left;
  logic [AW-1:0] il_src_q, il_rsrc_q;  // segment source; gather: source of the row's pixel 0
  logic [OW-1:0] il_dst_q;             // segment destination in the layer's buffer region
  logic [15:0] il_x_q;                 // gather: output column of the segment
  // the loading layer's constants (taken at ld_start_i)
  logic il_g_q, il_two_q, il_res_q;
  logic [7:0] il_img_q, il_imgs_q;     // packed images: the segment's image, the image count
  logic [AW-1:0] il_istr_q;
  logic [15:0] il_cin_q, il_wo_q;
  logic [OW-1:0] il_na_q, il_nres_q, il_cpad_q, il_offb_q;
  logic [AW-1:0] il_src2_q, il_gstep_q, il_grow_q;  // il_src2_q: the second segment's source
  logic [OW-1:0] in_loaded_q [2];  // input bytes arrived, by layer parity
  logic [IAW-1:0] job_base;
  logic [AW-1:0] job_src;

  assign req_valid_o = !il_done_q && !stop_i;
  assign il_left     = (il_g_q ? OW'(il_cin_q) :
                        ((il_res_q && !il_region_q) ? il_nres_q : il_na_q)) - il_off_q;
  assign job_base    = ld_ib_i + IAW'(il_dst_q + il_off_q);
  assign job_src     = il_src_q + AW'(il_off_q);
  always_comb begin
    req_o      = '0;
    req_o.src  = LAW'(job_src);
    req_o.len  = (il_left > OW'(Chunk)) ? 32'(Chunk) : 32'(il_left);
    req_o.base = LBW'(job_base);
    req_o.flag = ld_par_i;
    req_o.dst  = nasa_engine_pkg::DstIn;
  end

  always_ff @(posedge clk_i) begin
    if (ld_start_i) begin
      il_g_q     <= cfg_i.g;
      il_two_q   <= cfg_i.add || cfg_i.res;
      il_res_q   <= cfg_i.res;
      il_cin_q   <= cfg_i.cin;
      il_wo_q    <= cfg_i.wo;
      il_na_q    <= OW'(cfg_i.na);
      il_nres_q  <= OW'(cfg_i.nres);
      il_cpad_q  <= OW'(cfg_i.cpad);
      il_offb_q  <= OW'(cfg_i.offb);
      il_src2_q  <= AW'(cfg_i.res ? cfg_i.in : cfg_i.in2);
      il_gstep_q <= AW'(cfg_i.gstep);
      il_grow_q  <= AW'(cfg_i.grow);
      il_imgs_q  <= cfg_i.imgs;
      il_istr_q  <= AW'(cfg_i.istride);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      il_region_q <= 1'b0;
      il_done_q   <= 1'b1;
      il_off_q    <= '0;
      il_src_q    <= '0;
      il_rsrc_q   <= '0;
      il_dst_q    <= '0;
      il_x_q      <= '0;
      il_img_q    <= '0;
    end else if (ld_start_i) begin
      il_region_q <= 1'b0;
      il_done_q   <= 1'b0;
      il_off_q    <= '0;
      il_src_q    <= AW'(cfg_i.res ? cfg_i.in2 : cfg_i.in);  // a folded residual first
      il_rsrc_q   <= AW'(cfg_i.in);
      il_dst_q    <= '0;
      il_x_q      <= '0;
      il_img_q    <= '0;
    end else if (stop_i) begin
      il_done_q <= 1'b1;
    end else if (grant_i) begin
      if (il_left <= OW'(Chunk)) begin
        il_off_q <= '0;
        if (il_g_q && il_dst_q + il_cpad_q < il_na_q) begin
          il_dst_q <= il_dst_q + il_cpad_q;
          if (il_x_q + 16'd1 == il_wo_q) begin
            il_x_q    <= '0;
            il_rsrc_q <= il_rsrc_q + il_grow_q;
            il_src_q  <= il_rsrc_q + il_grow_q;
          end else begin
            il_x_q   <= il_x_q + 16'd1;
            il_src_q <= il_src_q + il_gstep_q;
          end
        end else if (il_two_q && !il_region_q) begin
          il_region_q <= 1'b1;
          il_src_q    <= il_src2_q;
          il_dst_q    <= il_offb_q;
        end else if (il_img_q + 8'd1 < il_imgs_q) begin  // the next packed image
          il_img_q  <= il_img_q + 8'd1;
          il_rsrc_q <= il_rsrc_q + il_istr_q;
          il_src_q  <= il_rsrc_q + il_istr_q;
          il_dst_q  <= il_dst_q + il_offb_q;
        end else begin
          il_done_q <= 1'b1;
        end
      end else begin
        il_off_q <= il_off_q + OW'(Chunk);
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      in_loaded_q[0] <= '0;
      in_loaded_q[1] <= '0;
    end else begin
      if (in_we_i) begin
        in_loaded_q[in_flag_i] <= in_loaded_q[in_flag_i] + OW'(MemBytes);
      end
      // (the counter's last layer is complete: all its input arrived)
      if (ld_start_i) in_loaded_q[!ld_par_i] <= '0;
    end
  end
  assign a_loaded_o = LOW'(in_loaded_q[a_par_i]);
  assign done_o     = il_done_q;

  // the high bits of the configuration's fields (see nasa_engine_pkg)
  logic unused_cfg;
  assign unused_cfg = ^cfg_i;

`ifndef SYNTHESIS
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (req_valid_o && !grant_i && !stop_i && !ld_start_i) |=>
                   (stop_i || (req_valid_o && $stable(req_o))))
    else $error("input job withdrawn or changed while stalled (no abort)");
  assert property (@(posedge clk_i) disable iff (!rst_ni) !$isunknown({req_valid_o, done_o}))
    else $error("X on input loader control");
  // a layer starts loading only once the loader is done with the one before
  assert property (@(posedge clk_i) disable iff (!rst_ni) ld_start_i |-> il_done_q)
    else $error("input loader restarted while busy");
`endif
endmodule
