import CastReceiver
import CastTransport
import Testing

@testable import CastSession

/// Devices whose volume cannot be set (`controlType` `fixed`), and receivers that refuse SET_VOLUME.
@Suite struct FixedVolumeTests {
    private static func isNotSupported(_ error: any Error) -> Bool {
        (error as? CastSessionError)?.code == .notSupported
    }

    /// A fixed-volume device ignores SET_VOLUME and answers with its unchanged status, so a session that sent it
    /// reported success though nothing changed: the session refuses volume, steps and mute itself, and says why.
    @Test(.timeLimit(.minutes(1))) func aSessionRefusesToSetAFixedVolume() async throws {
        try await withStartedSession(device: { $0.hasFixedVolume = true }) { fixture in
            let session = fixture.session
            #expect(session.deviceStatus?.hasFixedVolume == true)
            await #expect { try await session.setDeviceVolume(0.3) } throws: { Self.isNotSupported($0) }
            await #expect { try await session.adjustDeviceVolume(bySteps: -2) } throws: { Self.isNotSupported($0) }
            await #expect { try await session.setDeviceMuted(true) } throws: { Self.isNotSupported($0) }
            do {
                try await session.setDeviceVolume(0.3)
            } catch let error as CastSessionError {
                #expect(error.message.contains("this device's volume is fixed"))
            }
            #expect(fixture.device.volume == (1.0, false))
            #expect(session.connectionState == .connected, "a refusal does not end the session")
        }
    }

    /// The same without a session (an idle device's volume, `cast volume` with nothing playing).
    @Test(.timeLimit(.minutes(1))) func anObserverRefusesToSetAFixedVolume() async throws {
        var configuration = DeviceConfiguration(friendlyName: "Soundbar", port: 0)
        configuration.hasFixedVolume = true
        try await withCastReceiverEmulator(devices: [configuration], clock: ManualCastClock()) { emulator in
            let observer = DeviceObserver(device: emulator.devices[0].castDevice, options: testOptions())
            let idle = try await observer.start()
            #expect(idle.deviceStatus.hasFixedVolume)
            await #expect { try await observer.setVolume(0.3) } throws: { Self.isNotSupported($0) }
            await #expect { try await observer.adjustVolume(bySteps: 1) } throws: { Self.isNotSupported($0) }
            await #expect { try await observer.setMuted(true) } throws: { Self.isNotSupported($0) }
            await observer.stop()
        }
    }

    /// A receiver that answers SET_VOLUME with INVALID_REQUEST refused it: `.refused` with its reason, not
    /// `.invalidResponse` (an answer that could not be understood).
    @Test(.timeLimit(.minutes(1))) func anInvalidRequestAnsweringSetVolumeIsARefusal() async throws {
        try await withStartedSession(device: { $0.faults.refusesVolumeChanges = true }) { fixture in
            await #expect {
                try await fixture.session.setDeviceVolume(0.3)
            } throws: { error in
                let error = error as? CastSessionError
                return error?.code == .refused && error?.receiverReason == "INVALID_COMMAND"
                    && error?.message.contains("refused SET_VOLUME") == true
            }
            #expect(fixture.device.volume.level == 1.0)
        }
    }
}
