// Uses the installed headers: a block and the device buffer type another OOT module
// would declare on its own GPU ports.
#include <gnuradio/gpuradar/device_buffer.h>
#include <gnuradio/gpuradar/envelope.h>
#include <iostream>

int main()
{
    auto env = gr::gpuradar::envelope::make(16, "linear", false, "cpu");
    std::cout << "consumer: envelope backend " << env->backend()
              << ", device buffer type " << gr::gpuradar::device_buffer::type.name()
              << "\n";
    return env->backend() == "cpu" ? 0 : 1;
}
