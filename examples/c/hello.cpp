// A C++ program using libvcvt through its C header: f32 -> bf16 -> f32.
//
//   c++ $(pkg-config --cflags vcvt) hello.cpp $(pkg-config --libs vcvt) -o hello_cpp
#include <cstdint>
#include <cstdio>
#include <vector>

#include <vcvt.h>

int main() {
    std::vector<float> x = {1.0f, -2.5f, 3.14159f, 1.0e-3f, 65520.0f};
    std::vector<std::uint16_t> bf16(x.size());
    std::vector<float> back(x.size());
    vcvt_options opts{};  // defaults; opts.backend = VCVT_BACKEND_SCALAR would pin a backend
    int rc = vcvt_convert(x.data(), VCVT_F32, bf16.data(), VCVT_BF16, x.size(), &opts);
    if (rc == VCVT_OK) rc = vcvt_convert(bf16.data(), VCVT_BF16, back.data(), VCVT_F32, x.size(), nullptr);
    if (rc != VCVT_OK) {
        std::fprintf(stderr, "vcvt: %s (%s)\n", vcvt_strerror(rc), vcvt_last_error_message());
        return 1;
    }
    std::printf("libvcvt %s on %s\n", vcvt_version(), vcvt_backend_name(vcvt_backend_active()));
    for (std::size_t i = 0; i < x.size(); i++)
        std::printf("%g -> bf16 0x%04x -> %g\n", x[i], bf16[i], back[i]);
    // 3.14159 is not a bf16 value: it comes back as the nearest one, 3.140625.
    return back[2] == 3.140625f ? 0 : 1;
}
